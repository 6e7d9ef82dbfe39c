"""The chaos suite's checkers (tools/chaos/checkers.py) on small synthetic runs: a clean run
passes every checker, and each checker catches a violation planted for it (a checker that
cannot fail would prove nothing). Also the derivation of history events from log lines."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tools.chaos import checkers
from tools.chaos.checkers import Run
from tools.chaos.history import bank_events, consumer_events, parse_ts
from tools.chaos.workload import charge_body

LEASE_MS = 4000


def claim(t: float, key: str, token: str, fence: int, consumer: str = "c1.0", offset_ms: int = 0, message: str = "") -> dict[str, Any]:
    return {"t": t, "type": "claim", "chargeId": key, "messageId": message or f"m-{key}", "outcome": "ACQUIRED", "claimToken": token,
            "fence": fence, "leaseUntil": int((t * 1000) + offset_ms + LEASE_MS), "consumer": consumer, "offsetMs": offset_ms}


def recorded(t: float, key: str, token: str, consumer: str = "c1.0") -> dict[str, Any]:
    return {"t": t, "type": "recorded", "chargeId": key, "messageId": f"m-{key}", "operation": "complete", "claimToken": token,
            "consumer": consumer}


def clean_run() -> Run:
    """CHG-A debited once (a duplicate delivery answered DUPLICATE_DONE), CHG-R refused and
    dead-lettered, CHG-M mismatched (the other copy dead-lettered), one invalid body."""
    events = [
        {"t": 99.0, "type": "send", "chargeId": "CHG-A"},
        claim(100.0, "CHG-A", "ta", 1),
        {"t": 100.1, "type": "bank", "chargeId": "CHG-A", "outcome": "transient"},
        {"t": 100.2, "type": "release", "chargeId": "CHG-A", "messageId": "m-CHG-A", "consumer": "c1.0"},
        claim(102.0, "CHG-A", "ta2", 2, consumer="c2.0"),
        {"t": 102.1, "type": "bank", "chargeId": "CHG-A", "outcome": "created"},
        recorded(102.2, "CHG-A", "ta2", consumer="c2.0"),
        claim(100.0, "CHG-R", "tr", 1),
        {"t": 100.1, "type": "bank", "chargeId": "CHG-R", "outcome": "rejected"},
        recorded(100.2, "CHG-R", "tr"),
        claim(100.0, "CHG-M", "tm", 1, consumer="c3.0"),
        {"t": 100.1, "type": "bank", "chargeId": "CHG-M", "outcome": "created"},
        recorded(100.2, "CHG-M", "tm", consumer="c3.0"),
    ]
    return Run(
        plan={"CHG-A": {"kind": "valid", "amount": 100}, "CHG-R": {"kind": "refused", "amount": 5},
              "CHG-M": {"kind": "mismatch", "amount": 300, "altAmount": 301}},
        invalid={"INV-x-00001"},
        events=events,
        ledger=[{"chargeId": "CHG-A", "amountMinor": 100, "replays": 0}, {"chargeId": "CHG-M", "amountMinor": 301, "replays": 0}],
        records={"CHG-A": {"state": "DONE", "claimToken": "ta2"}, "CHG-R": {"state": "FAILED", "claimToken": "tr"},
                 "CHG-M": {"state": "DONE", "claimToken": "tm"}},
        dlq=[{"body": "not json INV-x-00001", "reason": "INVALID_MESSAGE"},
             {"body": charge_body("CHG-R", "ACC-CLOSED-1", 5), "reason": "PERMANENT_DEBIT_FAILURE"},
             {"body": charge_body("CHG-M", "ACC-1", 300), "reason": "PAYLOAD_MISMATCH"}],
        source_depth=0,
        lease_ms=LEASE_MS,
        offsets_ms={"c1.0": 0, "c2.0": 0, "c3.0": 0},
        quiet_from=101.0,
        drained_at=103.0,
        drain_bound_seconds=30.0,
    )


def verdicts(run: Run) -> dict[str, checkers.CheckResult]:
    return {r.name: r for r in checkers.check_all(run)}


def test_a_clean_run_passes_every_checker() -> None:
    results = verdicts(clean_run())
    assert [name for name, r in results.items() if not r.ok] == []
    assert all(r.asserted for r in results.values())
    assert results["C1"].counts == {"debits": 2, "doubles": 0, "attempts": 4, "maxAttempts": 2, "replays": 0}
    assert results["C3"].counts == {"ledgerTotal": 401, "expectedTotal": 401}


def only_failure(run: Run) -> str:
    failed = [r.name for r in checkers.check_all(run) if r.failed]
    assert len(failed) >= 1, "the planted violation was not caught"
    return failed[0]


def test_c1_catches_a_second_committed_debit() -> None:
    run = clean_run()
    run.events.append({"t": 103.0, "type": "bank", "chargeId": "CHG-A", "outcome": "created"})
    assert only_failure(run) == "C1"
    run = clean_run()
    run.ledger.append({"chargeId": "CHG-A", "amountMinor": 100, "replays": 0})
    assert "C1" in [r.name for r in checkers.check_all(run) if r.failed]


@pytest.mark.parametrize("plant", ["no_record", "invalid_not_dead_lettered", "queue_not_empty", "mismatch_copy_missing",
                                   "refused_not_in_dlq"])
def test_c2_catches_a_lost_charge(plant: str) -> None:
    run = clean_run()
    if plant == "no_record":
        del run.records["CHG-A"]
    elif plant == "invalid_not_dead_lettered":
        run.dlq = [m for m in run.dlq if "INV-" not in m["body"]]
    elif plant == "queue_not_empty":
        run.source_depth = 3
    elif plant == "mismatch_copy_missing":
        run.dlq = [m for m in run.dlq if m["reason"] != "PAYLOAD_MISMATCH"]
    else:
        run.dlq = [m for m in run.dlq if m["reason"] != "PERMANENT_DEBIT_FAILURE"]
    assert "C2" in [r.name for r in checkers.check_all(run) if r.failed]


def test_c2_accepts_a_record_lost_with_the_store_when_it_was_final_before() -> None:
    run = clean_run()
    run.wipes = [150.0]
    run.records = {}
    assert verdicts(run)["C2"].ok
    run.wipes = [101.0]  # CHG-A became final after the wipe: its record must be there
    assert not verdicts(run)["C2"].ok


def test_c3_catches_a_wrong_amount() -> None:
    run = clean_run()
    run.ledger[0] = {**run.ledger[0], "amountMinor": 150}
    assert "C3" in [r.name for r in checkers.check_all(run) if r.failed]
    run = clean_run()
    run.ledger.append({"chargeId": "CHG-R", "amountMinor": 5, "replays": 0})  # a refused charge debited
    assert "C3" in [r.name for r in checkers.check_all(run) if r.failed]


def test_c4_catches_a_stale_completion() -> None:
    run = clean_run()
    # c1's claim (token ta) was taken over by c2 (fence 2); c1's late complete accepted as well.
    run.events.append(recorded(103.0, "CHG-A", "ta"))
    assert only_failure(run) == "C4"
    run = clean_run()
    run.records["CHG-A"]["claimToken"] = "ta"  # the table holds the superseded token
    assert only_failure(run) == "C4"
    run = clean_run()
    run.events = [e for e in run.events if not (e["type"] == "recorded" and e["chargeId"] == "CHG-A")]
    run.events.append(recorded(103.0, "CHG-A", "ta"))  # only the stale holder's write, table says ta
    run.records["CHG-A"]["claimToken"] = "ta"
    assert only_failure(run) == "C4"


def test_c4_accepts_an_unlogged_final_write_only_from_the_newest_claim_of_a_killed_writer() -> None:
    run = clean_run()
    run.events = [e for e in run.events if not (e["type"] == "recorded" and e["chargeId"] == "CHG-A")]
    assert not verdicts(run)["C4"].ok, "a final record nobody wrote"
    run.events.append({"t": 102.3, "type": "fault", "action": "kill", "consumer": "c2.0"})
    assert verdicts(run)["C4"].ok, "c2 held the newest claim and was killed before it could log"
    run.records["CHG-A"]["claimToken"] = "ta"
    assert not verdicts(run)["C4"].ok, "the table holds a superseded claim's token"


def test_c4_counts_fenced_writes_without_failing() -> None:
    run = clean_run()
    run.events.append({"t": 103.0, "type": "fenced", "chargeId": "CHG-A", "claimToken": "ta", "consumer": "c1.0"})
    result = verdicts(run)["C4"]
    assert result.ok and result.counts["fenced"] == 1


def overlapping(offset_ms: int) -> Run:
    """c2 takes CHG-O one second into c1's four-second lease while c1 still works on it."""
    run = clean_run()
    run.plan["CHG-O"] = {"kind": "valid", "amount": 7}
    run.ledger.append({"chargeId": "CHG-O", "amountMinor": 7, "replays": 1})
    run.records["CHG-O"] = {"state": "DONE", "claimToken": "to2"}
    run.offsets_ms["c2.0"] = offset_ms
    run.events += [claim(200.0, "CHG-O", "to1", 1, message="mo1"),
                   claim(201.0, "CHG-O", "to2", 2, consumer="c2.0", offset_ms=offset_ms, message="mo2"),
                   {"t": 201.1, "type": "bank", "chargeId": "CHG-O", "outcome": "created"},
                   recorded(201.2, "CHG-O", "to2", consumer="c2.0"),
                   {"t": 202.0, "type": "fenced", "chargeId": "CHG-O", "claimToken": "to1", "consumer": "c1.0"}]
    return run


def test_c4l_catches_two_live_claims_when_skew_is_within_the_bound() -> None:
    result = verdicts(overlapping(offset_ms=5))["C4L"]
    assert result.asserted and not result.ok and result.failed


def test_c4l_is_reported_not_asserted_beyond_the_skew_bound() -> None:
    result = verdicts(overlapping(offset_ms=2 * LEASE_MS))["C4L"]
    assert not result.asserted and not result.ok and not result.failed
    assert "beyond" in result.detail


def test_c4l_allows_a_takeover_after_the_holder_died_or_its_lease_ended() -> None:
    run = overlapping(offset_ms=5)
    run.events.append({"t": 200.5, "type": "fault", "action": "kill", "consumer": "c1.0"})
    assert verdicts(run)["C4L"].ok
    run = overlapping(offset_ms=5)
    for e in run.events:
        if e.get("claimToken") == "to2" and e["type"] == "claim":
            e["t"] = 204.5  # after c1's lease (200 s + 4 s)
    assert verdicts(run)["C4L"].ok


def test_c5_catches_a_slow_or_missing_drain() -> None:
    run = clean_run()
    run.drained_at = 140.0  # CHG-A settled at 102.2, then nothing for 37.8 s
    assert only_failure(run) == "C5"
    assert verdicts(run)["C5"].counts == {"drainSeconds": 39.0, "maxStall": 37.8, "bound": 30.0}
    run.drained_at = None
    assert only_failure(run) == "C5"
    assert checkers.drain_bound_seconds(4, 1, 0) == pytest.approx(2 * 4 + 2 + 10 + 10)
    assert checkers.drain_bound_seconds(4, 100, 0) == pytest.approx(2 * 4 + 300 + 10 + 10)


def test_consumer_log_lines_become_events_in_true_time() -> None:
    lines = [
        {"ts": "2026-12-01T03:00:10.500Z", "msg": "claim decided", "chargeId": "CHG-1", "messageId": "m1",
         "outcome": "ACQUIRED", "claimToken": "abc", "fence": 1, "leaseUntil": 1, "state": "IN_PROGRESS"},
        {"ts": "2026-12-01T03:00:10.600Z", "msg": "recorded", "chargeId": "CHG-1", "messageId": "m1",
         "operation": "complete", "claimToken": "abc"},
        {"ts": "2026-12-01T03:00:10.700Z", "msg": "unrelated"},
    ]
    events = consumer_events(copy.deepcopy(lines), "c1.0", offset_ms=8000)
    assert [e["type"] for e in events] == ["claim", "recorded"]
    assert events[0]["t"] == pytest.approx(parse_ts("2026-12-01T03:00:10.500Z") - 8.0)
    assert events[1]["claimToken"] == "abc"
    bank = bank_events([{"ts": "2026-12-01T03:00:11.000Z", "event": "request", "path": "/v1/debits", "chargeId": "CHG-1",
                         "status": 201, "outcome": "created"},
                        {"ts": "2026-12-01T03:00:11.000Z", "event": "request", "path": "/v1/notifications"}])
    assert bank == [{"t": parse_ts("2026-12-01T03:00:11.000Z"), "type": "bank", "chargeId": "CHG-1", "status": 201,
                     "outcome": "created"}]
