"""The chaos suite's checkers (tools/chaos/checkers.py) on small synthetic runs: a clean run
passes every checker, and each checker catches a violation planted for it (a checker that
cannot fail would prove nothing). Also the derivation of history events from log lines."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tools.chaos import checkers, report, stall_checkers
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
    assert all(results[n].asserted for n in ("C1", "C2", "C3", "C4", "C4L", "C5"))
    # The long-outage checkers judge only runs that had an outage (or a Retry-After).
    assert [n for n in ("C6", "C7", "C8", "C9", "C10") if results[n].asserted] == []
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


def reconciled(*found: tuple[str, str], rows: int = 2) -> list[dict[str, Any]]:
    return [{"kind": kind, "chargeId": charge_id} for kind, charge_id in found] + [
        {"event": "reconciled", "ledgerRows": rows, "matched": rows - len(found)}]


def test_cr_holds_when_reconcile_reports_exactly_what_the_run_leaves() -> None:
    run = clean_run()
    run.reconciled = reconciled()
    assert verdicts(run)["CR"].ok and verdicts(run)["CR"].asserted
    run.wipes, run.records = [150.0], {}  # final before the wipe: the ledger speaks for them
    run.reconciled = reconciled(("DEBITED_NOT_RECORDED", "CHG-A"), ("DEBITED_NOT_RECORDED", "CHG-M"))
    assert verdicts(run)["CR"].ok


@pytest.mark.parametrize("plant", ["unexplained", "missed", "short_read"])
def test_cr_catches_a_reconcile_that_disagrees(plant: str) -> None:
    run = clean_run()
    run.reconciled = {"unexplained": reconciled(("DEBIT_REF_MISMATCH", "CHG-A")), "short_read": reconciled(rows=1),
                      "missed": reconciled()}[plant]
    if plant == "missed":
        run.wipes, run.records = [150.0], {}
    assert not verdicts(run)["CR"].ok


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


def test_c4_accepts_an_unlogged_final_write_whose_answer_was_lost_in_a_store_outage() -> None:
    run = clean_run()
    run.events = [e for e in run.events if not (e["type"] == "recorded" and e["chargeId"] == "CHG-A")]
    failed = {"t": 102.3, "type": "store_failed", "chargeId": "CHG-A", "operation": "complete", "consumer": "c2.0"}
    run.events.append({**failed, "ambiguous": False})
    assert not verdicts(run)["C4"].ok, "an unambiguous failure wrote nothing"
    run.events.append({**failed, "ambiguous": True, "consumer": "c1.0"})
    assert not verdicts(run)["C4"].ok, "c1 did not hold the newest claim"
    run.events.append({**failed, "ambiguous": True})
    assert verdicts(run)["C4"].ok, "c2's final write went out and its answer was lost"


def test_c4_starts_a_charge_afresh_after_reconcile_reopened_it() -> None:
    run = clean_run()
    # CHG-A's record ended (ta2), reconcile --resolve-uncertain reopened it, and the redriven
    # copy's claim wrote the final record again.
    run.events += [{"t": 104.0, "type": "resolve", "uncertain": ["CHG-A"]}, claim(105.0, "CHG-A", "ta3", 3),
                   recorded(105.2, "CHG-A", "ta3")]
    run.records["CHG-A"]["claimToken"] = "ta3"
    assert verdicts(run)["C4"].ok, verdicts(run)["C4"].detail
    run.events = [e for e in run.events if e["type"] != "resolve"]
    assert not verdicts(run)["C4"].ok, "without the reopen, two claims' final writes in one epoch"
    # Settled instead (debited in the ledger): the operator's write is the final record.
    run = clean_run()
    run.events.append({"t": 104.0, "type": "resolve", "uncertain": ["CHG-A"]})
    assert verdicts(run)["C4"].ok, verdicts(run)["C4"].detail


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


def test_c4l_leaves_out_a_holder_paused_between_its_claim_and_the_takeover() -> None:
    # A SIGSTOPped holder cannot heartbeat: its lateness is the pause, beyond the bound's margin.
    run = overlapping(offset_ms=5)
    run.events += [{"t": 200.2, "type": "fault", "fault": "consumer-pause", "action": "start", "consumer": "c1.0"},
                   {"t": 210.0, "type": "fault", "fault": "consumer-pause", "action": "stop", "consumer": "c1.0"}]
    assert verdicts(run)["C4L"].ok
    # A pause that ended before the claim changes nothing.
    run = overlapping(offset_ms=5)
    run.events += [{"t": 150.0, "type": "fault", "fault": "consumer-pause", "action": "start", "consumer": "c1.0"},
                   {"t": 160.0, "type": "fault", "fault": "consumer-pause", "action": "stop", "consumer": "c1.0"}]
    result = verdicts(run)["C4L"]
    assert result.asserted and not result.ok


def test_c5_catches_a_slow_or_missing_drain() -> None:
    run = clean_run()
    run.drained_at = 140.0  # CHG-A settled at 102.2, then nothing for 37.8 s
    assert only_failure(run) == "C5"
    assert verdicts(run)["C5"].counts == {"drainSeconds": 39.0, "maxStall": 37.8, "bound": 30.0}
    run.drained_at = None
    assert only_failure(run) == "C5"
    assert checkers.drain_bound_seconds(4, 1, 0) == pytest.approx(2 * 4 + 2 + 10 + 10)
    assert checkers.drain_bound_seconds(4, 100, 0) == pytest.approx(2 * 4 + 300 + 10 + 10)
    # A failed DLQ forward hides its message 30 s (a dead-lettering during a credentials outage).
    assert checkers.drain_bound_seconds(4, 1, 0, dlq_forward_failed=True) == pytest.approx(2 * 4 + 30 + 10 + 10)
    assert checkers.drain_bound_seconds(4, 100, 0, dlq_forward_failed=True) == pytest.approx(2 * 4 + 300 + 10 + 10)
    (failed,) = consumer_events([{"ts": "2026-12-01T03:00:10.500Z", "msg": "DLQ forward failed; message kept for retry",
                                  "messageId": "m1", "code": "CredentialsUnavailable"}], "c1.0")
    assert (failed["type"], failed["messageId"]) == ("dlq_failed", "m1")


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


# --- long outages (issue 22): C6-C9 ---------------------------------------------------------


def circuit(t: float, to: str, consumer: str, dependency: str = "debit") -> dict[str, Any]:
    return {"t": t, "type": "circuit", "dependency": dependency, "to": to, "consumer": consumer}


def bank(t: float, key: str, outcome: str = "transient", status: int = 503, **fields: Any) -> dict[str, Any]:
    return {"t": t, "start": t - 0.01, "type": "bank", "chargeId": key, "status": status, "outcome": outcome, **fields}


def outage_run() -> Run:
    """The clean run plus a debit outage from 200 to 260: both consumers' circuits open at
    201/201.5 and close at 261, three probes (half-open) while open, each one bank attempt,
    and one call admitted just before the second circuit opened."""
    run = clean_run()
    run.events = [e for e in run.events if e["type"] != "bank" or e["t"] < 150]
    run.events += [
        {"t": 90.0, "type": "consumer", "what": "consumer started", "consumer": "c1.0"},
        {"t": 90.0, "type": "consumer", "what": "consumer started", "consumer": "c2.0"},
        bank(200.5, "CHG-A"), bank(200.9, "CHG-A"),
        circuit(201.0, "open", "c1.0"), circuit(201.5, "open", "c2.0"),
        bank(201.6, "CHG-A"),  # admitted before c2.0 opened
        circuit(210.0, "half_open", "c1.0"), bank(210.01, "CHG-A"), circuit(210.1, "open", "c1.0"),
        circuit(230.0, "half_open", "c2.0"), bank(230.01, "CHG-A"), circuit(230.1, "open", "c2.0"),
        circuit(260.5, "half_open", "c1.0"), bank(260.51, "CHG-A", "replay", 200),
        circuit(260.6, "closed", "c1.0"), circuit(261.0, "closed", "c2.0"),
    ]
    run.outages = [{"dependency": "debit", "start": 200.0, "end": 260.0}]
    run.quiet_from, run.drained_at = 260.0, 275.0
    run.drain_bound_seconds = 60.0  # C5's stall bound; C8 judges the drain after recovery
    run.recovery_bound_seconds = 30.0
    return run


def test_an_outage_run_within_its_bounds_passes_c6_to_c8() -> None:
    results = verdicts(outage_run())
    assert [name for name, r in results.items() if not r.ok] == []
    assert all(results[n].asserted for n in ("C6", "C7", "C8"))
    assert results["C7"].counts == {"attemptsWhileOpen": 4, "probes": 3, "admittedBefore": 1, "openSeconds": 59.1,
                                    "attemptsBeforeOpen": 6}
    assert results["C8"].counts == {"drainSeconds": 15.0, "bound": 30.0}
    assert checkers.open_intervals(outage_run(), "debit") == [(201.5, 260.6)]


@pytest.mark.parametrize("plant", ["reasonless", "valid charge with a reason"])
def test_c6_catches_a_dead_letter_caused_by_the_outage(plant: str) -> None:
    run = outage_run()
    reason = None if plant == "reasonless" else "PERMANENT_DEBIT_FAILURE"
    run.dlq.append({"body": charge_body("CHG-A", "ACC-1", 100), "reason": reason})
    failing = {r.name for r in checkers.check_all(run) if r.failed}
    assert "C6" in failing


def test_c7_catches_attempts_beyond_the_probes_while_open() -> None:
    run = outage_run()
    run.events += [bank(240.0, "CHG-A"), bank(240.2, "CHG-A")]  # no half-open before them
    assert only_failure(run) == "C7"
    assert "5 attempts" in verdicts(run)["C7"].detail or "6 attempts" in verdicts(run)["C7"].detail


def test_c7_fails_when_the_circuit_never_opened_on_every_consumer() -> None:
    run = outage_run()
    run.events = [e for e in run.events if not (e["type"] == "circuit" and e["consumer"] == "c2.0")]
    assert only_failure(run) == "C7"


def test_c8_catches_a_slow_or_missing_drain_after_recovery() -> None:
    run = outage_run()
    run.drained_at = 300.0
    assert only_failure(run) == "C8"
    assert verdicts(run)["C8"].counts == {"drainSeconds": 40.0, "bound": 30.0}
    run.drained_at = None
    assert "C8" in {r.name for r in checkers.check_all(run) if r.failed}


def test_c9_catches_a_retry_before_retry_after() -> None:
    run = clean_run()
    run.events += [bank(300.0, "CHG-A", "throttled", 429, retryAfter="3"), bank(304.0, "CHG-A", "replay", 200)]
    assert verdicts(run)["C9"].asserted and verdicts(run)["C9"].ok
    run.events[-1] = bank(302.0, "CHG-A", "replay", 200)
    assert only_failure(run) == "C9"


def test_c9_binds_the_answered_process_and_message_not_another_process_s_copy() -> None:
    """The not-before is per process (docs/design.md, "Retry-After"): c1.0 got the 429 through
    message m-CHG-A; c2.0 debiting another copy 2 s later is counted, not a violation; c1.0
    retrying, or anyone retrying m-CHG-A, that soon is."""
    def run_with(consumer: str, message: str) -> Run:
        run = clean_run()
        for i, e in enumerate(run.events):
            if e["chargeId"] == "CHG-A" and e["type"] == "bank" and e["t"] == 100.1:
                run.events[i] = bank(100.1, "CHG-A", "throttled", 429, retryAfter="3")
            if e["chargeId"] == "CHG-A" and e["type"] == "claim" and e["t"] == 102.0:
                run.events[i] = claim(102.0, "CHG-A", "ta2", 2, consumer=consumer, message=message)
        return run
    other_copy = verdicts(run_with("c2.0", "m2"))["C9"]
    assert other_copy.asserted and other_copy.ok
    assert other_copy.counts["otherProcessEarly"] == 1 and other_copy.counts["retried"] == 0
    assert only_failure(run_with("c1.0", "m2")) == "C9"
    assert only_failure(run_with("c2.0", "m-CHG-A")) == "C9"


def test_circuit_transitions_and_bank_arrival_times_become_events() -> None:
    events = consumer_events([
        {"ts": "2026-12-01T03:00:10.500Z", "msg": "circuit opened", "dependency": "debit"},
        {"ts": "2026-12-01T03:00:11.500Z", "msg": "circuit half-open", "dependency": "debit"},
        {"ts": "2026-12-01T03:00:11.600Z", "msg": "circuit closed", "dependency": "debit"},
    ], "c1.0")
    assert [(e["type"], e["dependency"], e["to"]) for e in events] == [
        ("circuit", "debit", "open"), ("circuit", "debit", "half_open"), ("circuit", "debit", "closed")]
    (event,) = bank_events([{"ts": "2026-12-01T03:00:11.000Z", "event": "request", "path": "/v1/debits", "chargeId": "CHG-1",
                             "status": 429, "outcome": "throttled", "ms": 1500.0, "retryAfter": "3"}])
    assert event["start"] == pytest.approx(parse_ts("2026-12-01T03:00:11.000Z") - 1.5)
    assert event["retryAfter"] == "3"


def test_c10_catches_a_lost_notification_or_debits_stopped_by_a_notification_outage() -> None:
    run = clean_run()
    run.outages = [{"dependency": "notify", "start": 100.0, "end": 103.0}]
    run.drained_at, run.recovery_bound_seconds = 103.0, 30.0
    run.notified = {"CHG-A"}
    run.records["CHG-M"]["status"] = "DEBITED_NOTIFICATION_FAILED"
    result = verdicts(run)["C10"]
    assert result.asserted and result.ok, result.detail
    assert result.counts == {"debitsDuringOutage": 2, "notified": 1, "notificationFailed": 1, "lost": 0}
    run.records["CHG-M"]["status"] = "DEBITED"  # neither notified nor marked for renotify
    assert only_failure(run) == "C10"
    run.records["CHG-M"]["status"] = "DEBITED_NOTIFICATION_FAILED"
    run.outages = [{"dependency": "notify", "start": 110.0, "end": 120.0}]  # no debit while it lasted
    run.drained_at = 120.0
    assert only_failure(run) == "C10"


# --- stalls (issue 34, tools/chaos/stall_checkers.py) -------------------------------------------


def stall_run(fault: str = "credentials-stall", debits_during: bool = True, exit_s: float | None = 2.0) -> Run:
    """Sends from t=0, a debit every 0.1 s from t=1 to t=30 (none in 12-20 unless
    `debits_during`), a stall from 10 to 20 that met 6 requests, SIGTERM at 12; each consumer
    fetched credentials at t=0, valid until t=40; health polled during the stall."""
    events: list[dict[str, Any]] = [{"t": 0.0, "type": "send", "chargeId": "CHG-A"}]
    events += [{"t": 1 + i / 10, "type": "bank", "chargeId": f"CHG-{i}", "outcome": "created"} for i in range(290)
               if debits_during or not 12 <= 1 + i / 10 < 20]
    events += [{"t": 10.0, "type": "fault", "fault": fault, "action": "start"},
               {"t": 20.0, "type": "fault", "fault": fault, "action": "stop", "hits": 6},
               {"t": 12.0, "type": "sigterm", "consumer": "c1.0", "graceSeconds": 3.0, "reached": True,
                "stallEnd": 20.0, "exitCode": 0, "exitSeconds": exit_s}]
    if fault == "credentials-stall":
        events += [{"t": 0.0, "type": "credentials", "consumer": c, "phase": "ok", "answered": True, "after": 0.0,
                    "expiration": 40.0} for c in ("c1.0", "c2.0", "c3.0")]
    events += [{"t": 10.0 + i, "type": "health", "consumer": "c2.0", "path": p, "status": 200 if i < 8 else 503}
               for i in range(10) for p in ("/health/live", "/health/ready")]
    return Run(plan={}, invalid=set(), events=events, ledger=[], records={}, dlq=[], source_depth=0, lease_ms=LEASE_MS,
               drained_at=30.0)


def stall_verdicts(run: Run) -> dict[str, checkers.CheckResult]:
    return {r.name: r for r in stall_checkers.check_all(run)}


def test_a_stall_that_debits_go_through_passes_and_reports_its_figures() -> None:
    run = stall_run()
    results = stall_verdicts(run)
    assert results["CS"].ok and results["CS"].asserted, results["CS"].detail
    assert results["CT"].ok and results["CT"].asserted, results["CT"].detail
    assert not results["CL"].asserted
    figures = stall_checkers.stall_figures(run)
    assert figures is not None
    assert (figures["before"], figures["during"], figures["after"]) == (10.0, 10.0, 10.0)
    assert figures["health"] == {"/health/live": "200x8, 503x2", "/health/ready": "200x8, 503x2"}
    assert "| stall-x | credentials-stall | 10.0 | 10.0 (10.0) |" in report.stall_markdown(
        [{"stall": report.stall_row("stall-x", figures, stall_checkers.check_all(run))}])


def test_cs_catches_debits_that_stop_while_credentials_are_valid() -> None:
    result = stall_verdicts(stall_run(debits_during=False))["CS"]
    assert result.failed and result.counts["during"] == 2.0, result.detail


def test_cs_judges_a_credentials_stall_only_while_the_credentials_last() -> None:
    run = stall_run(debits_during=False)
    for e in run.of_type("credentials"):
        e["expiration"] = 12.0  # debits may stop once no valid credentials remain
    assert stall_verdicts(run)["CS"].ok
    assert stall_checkers.stall_figures(run)["duringSeconds"] == 2.0  # type: ignore[index]
    # A prompt fetch while they were valid extends them; a late answer (the client may have
    # given up) does not.
    run.events.append({"t": 11.0, "type": "credentials", "consumer": "c1.0", "phase": "slow", "answered": True,
                       "after": 4.0, "expiration": 40.0})
    assert stall_verdicts(run)["CS"].ok
    for consumer in ("c1.0", "c2.0", "c3.0"):
        run.events.append({"t": 11.0, "type": "credentials", "consumer": consumer, "phase": "ok", "answered": True,
                           "after": 0.0, "expiration": 40.0})
    assert stall_verdicts(run)["CS"].failed


def test_cs_fails_a_stall_that_never_reached_the_consumers() -> None:
    run = stall_run(fault="resolver-stall")
    assert stall_verdicts(run)["CS"].ok
    next(e for e in run.events if e.get("action") == "stop")["hits"] = 0
    result = stall_verdicts(run)["CS"]
    assert result.failed and "never reached" in result.detail


@pytest.mark.parametrize("exit_s", [9.5, None])
def test_ct_catches_a_sigterm_that_outlives_grace_plus_five_seconds(exit_s: float | None) -> None:
    result = stall_verdicts(stall_run(exit_s=exit_s))["CT"]
    assert result.failed, result.detail
    run = stall_run()
    run.events = [e for e in run.events if e["type"] != "sigterm"]
    assert stall_verdicts(run)["CT"].failed


def test_cl_passes_a_log_stall_that_loses_lines_and_catches_one_that_loses_charges_or_debits() -> None:
    run = stall_run(fault="log-stall")
    run.events.append({"t": 31.0, "type": "log_dropped", "consumer": "c1.0", "value": 41.0})
    result = stall_verdicts(run)["CL"]
    assert result.ok and result.asserted and result.counts["droppedLines"] == 41.0, result.detail
    assert not stall_verdicts(run)["CS"].asserted
    run.plan = {"CHG-L": {"kind": "valid", "amount": 100}}  # never debited nor recorded
    assert stall_verdicts(run)["CL"].failed
    assert stall_verdicts(stall_run(fault="log-stall", debits_during=False))["CL"].failed


def test_c4_counts_final_writes_a_log_stall_left_unlogged_but_not_a_superseded_token() -> None:
    run = clean_run()
    run.events = [e for e in run.events if not (e["chargeId"] == "CHG-A" and e["type"] in ("recorded", "claim"))
                  or e.get("claimToken") == "ta"]
    assert not verdicts(run)["C4"].ok, "a final record nobody wrote"
    run.events += [{"t": 101.0, "type": "fault", "fault": "log-stall", "action": "start"},
                   {"t": 103.0, "type": "fault", "fault": "log-stall", "action": "stop"}]
    result = verdicts(run)["C4"]
    assert result.ok and result.counts["unlogged"] == 1, result.detail
    run.records["CHG-A"]["claimToken"] = "ta"  # the token of a claim the history shows taken over
    run.events.append(claim(102.0, "CHG-A", "ta2", 2, consumer="c2.0"))
    assert not verdicts(run)["C4"].ok


def test_ch_catches_a_debit_uncertain_charge_left_unresolved() -> None:
    from tools.chaos.horizon import ch_uncertain_resolved

    run = clean_run()
    assert not ch_uncertain_resolved(run).ok, "reconcile --resolve-uncertain must have run"
    run.events.append({"t": 110.0, "type": "resolve", "uncertain": ["CHG-A"], "exitCode": 0,
                       "summary": '{"debited":1}'})
    assert ch_uncertain_resolved(run).ok
    left = copy.deepcopy(run)
    left.records["CHG-A"] = {"state": "FAILED", "status": "DEBIT_UNCERTAIN", "claimToken": "ta2"}
    result = ch_uncertain_resolved(left)
    assert not result.ok and "still DEBIT_UNCERTAIN" in result.detail
