"""The operator's commands against the local stack (docs/design.md §5 "Command line"):
redrive that cannot loop, list from the sparse index, renotify and reopen with their audit
trail and their refusal of a raced record, the small things (--version, usage errors, status,
build and process metrics), all with the real binary, moto and the fake bank. boto3 and the
bank's ledger are the witnesses.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from typing import Any

import pytest

from charges import charge, charge_body
from tools.local_stack.charge_recovery import ChargeStack, Consumer, Consumers, attribute, binary, run_cli
from tools.local_stack.fake_bank import FakeBank
from tools.local_stack.processes import wait_until

pytestmark = pytest.mark.timeout(180)

NSF_ACCOUNT = "ACC-NSF-00000001"
PERMANENT_FAILURES = {"ACC-NSF": "INSUFFICIENT_FUNDS"}
DETERMINISTIC = ["PREVIOUSLY_FAILED", "PAYLOAD_MISMATCH", "INVALID_MESSAGE"]
# The one form of every time a command prints (docs/design.md §5, Command line).
ISO_MS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def event_line(text: str, event: str) -> dict[str, Any]:
    return next(line for line in json_lines(text) if line.get("event") == event)


def renotify(stack: ChargeStack, bank: FakeBank, *args: str) -> subprocess.CompletedProcess[str]:
    """`renotify` with the fake bank as the notification service."""
    return run_cli(["renotify", *args], {**stack.env(), **bank.env()})


def debits_of(bank: FakeBank, charge_id: str) -> list[dict[str, Any]]:
    return [d for d in bank.ledger()["debits"] if d["chargeId"] == charge_id]


def notifications_of(bank: FakeBank, charge_id: str) -> list[dict[str, Any]]:
    return [n for n in bank.ledger()["notifications"] if n["chargeId"] == charge_id]


def dlq_reasons(stack: ChargeStack, count: int) -> list[str | None]:
    """The failureReasons of the `count` DLQ messages, which are then made visible again."""
    letters = stack.dead_letters(count)
    stack.release(letters, stack.dlq_url)
    return sorted((attribute(m, "failureReason") or "NONE") for m in letters)


def fill_dlq_with_the_three_deterministic_reasons(stack: ChargeStack, bank: FakeBank) -> dict[str, str]:
    """With a consumer running: PAYLOAD_MISMATCH, PREVIOUSLY_FAILED (after its first
    PERMANENT_DEBIT_FAILURE copy, which is taken out) and INVALID_MESSAGE in the DLQ, as the
    consumer puts them there."""
    bank.set_faults(permanentFailures=PERMANENT_FAILURES)
    original, failed = charge("CHG-OP-ORIGINAL-1"), charge("CHG-OP-NSF-1", account=NSF_ACCOUNT)
    stack.send_bodies([charge_body(original), charge_body(failed)])
    stack.final_record(original["chargeId"])
    stack.final_record(failed["chargeId"])
    first = stack.dead_letters(1)
    assert attribute(first[0], "failureReason") == "PERMANENT_DEBIT_FAILURE"
    stack.delete(first, stack.dlq_url)
    stack.send_bodies([charge_body({**original, "amountMinor": 9999}), charge_body(failed), "not json"])
    assert dlq_reasons(stack, 3) == sorted(DETERMINISTIC)
    return {"original": original["chargeId"], "failed": failed["chargeId"]}


# --- redrive ------------------------------------------------------------------------------


def test_redrive_with_a_consumer_running_ends_and_moves_each_message_once(
    charge_stack: ChargeStack, consumers: Consumers, fake_bank: FakeBank
) -> None:
    """Today's ping-pong loop: with a consumer running, deterministic failures came straight
    back and a redrive without --max never ended (1,134 moves of 3 messages in 25 s)."""
    consumer = consumers.start()
    ids = fill_dlq_with_the_three_deterministic_reasons(charge_stack, fake_bank)
    # One message SQS dead-lettered itself (no failureReason): the only kind moved by default.
    charge_stack.send_body(charge_body(charge(ids["original"])), queue_url=charge_stack.dlq_url)
    forwarded_before = consumer.metric("ic_dlq_forwards_total")

    dry = charge_stack.cli("redrive", "--dry-run", timeout=60)
    assert dry.returncode == 0, dry.stderr
    listed = [line for line in json_lines(dry.stdout) if line["event"] in ("would move", "would skip")]
    assert sorted((line["event"], line["reason"]) for line in listed) == [
        ("would move", "NONE"),
        ("would skip", "INVALID_MESSAGE"),
        ("would skip", "PAYLOAD_MISMATCH"),
        ("would skip", "PREVIOUSLY_FAILED"),
    ]
    by_reason = {line["reason"]: line for line in listed}
    assert by_reason["PREVIOUSLY_FAILED"]["chargeId"] == ids["failed"]
    assert by_reason["PAYLOAD_MISMATCH"]["chargeId"] == ids["original"]
    assert by_reason["NONE"]["chargeId"] == ids["original"], "read from the body"
    assert all(line["ageSeconds"] >= 0 for line in listed)
    assert event_line(dry.stdout, "would redrive")["messages"] == 1
    assert "redriven" not in dry.stdout and '"moved"' not in dry.stdout, "a dry run says what would move"
    assert event_line(dry.stdout, "redrive summary")["byReason"]["NONE"] == {"wouldMove": 1, "wouldSkip": 0, "returned": 0}
    assert charge_stack.visible(charge_stack.dlq_url) == 4, "a dry run leaves every message visible"
    print("redrive --dry-run:\n" + dry.stdout)

    default = charge_stack.cli("redrive", timeout=60)
    assert default.returncode == 0, default.stderr
    summary = event_line(default.stdout, "redrive summary")
    assert summary["dlqDepthAtStart"] == 4
    assert summary["byReason"] == {
        "NONE": {"moved": 1, "skipped": 0, "returned": 0},
        **{reason: {"moved": 0, "skipped": 1, "returned": 0} for reason in DETERMINISTIC},
    }
    wait_until(
        lambda: consumer.metric("ic_claim_outcomes_total", outcome="DUPLICATE_DONE") >= 1,
        timeout=30,
        description="the moved copy acked as DUPLICATE_DONE",
    )

    # Opting the deterministic reasons in, with the consumer running: each moves once, comes
    # back once, and the run still ends.
    opted = charge_stack.cli("redrive", *[arg for r in DETERMINISTIC for arg in ("--reason", r)], timeout=60)
    assert opted.returncode == 0, opted.stderr
    summary = event_line(opted.stdout, "redrive summary")
    assert {reason: counts["moved"] for reason, counts in summary["byReason"].items()} == {r: 1 for r in DETERMINISTIC}
    assert event_line(opted.stdout, "redriven")["messages"] == 3
    wait_until(
        lambda: consumer.metric("ic_dlq_forwards_total") == forwarded_before + 3,
        timeout=30,
        description="the three copies dead-lettered again",
    )
    assert dlq_reasons(charge_stack, 3) == sorted(DETERMINISTIC)
    assert charge_stack.depth(charge_stack.dlq_url) == 3
    assert consumer.metric("ic_dlq_forwards_total") == forwarded_before + 3, "no second round"
    assert len(debits_of(fake_bank, ids["original"])) == 1
    assert debits_of(fake_bank, ids["failed"]) == []


def test_redrive_keeps_the_producers_attributes_and_drops_the_failure_ones(charge_stack: ChargeStack) -> None:
    body = charge_body(charge("CHG-OP-ATTRS-1"))
    charge_stack.sqs.send_message(
        QueueUrl=charge_stack.dlq_url,
        MessageBody=body,
        MessageAttributes={
            "failureReason": {"DataType": "String", "StringValue": "PREVIOUSLY_FAILED"},
            "failureDetail": {"DataType": "String", "StringValue": "charge already failed permanently: NSF"},
            "chargeId": {"DataType": "String", "StringValue": "CHG-OP-ATTRS-1"},
            "sourceMessageId": {"DataType": "String", "StringValue": "m-1"},
            "traceparent": {"DataType": "String", "StringValue": "00-4bf92f3577b34da6-00f067aa0ba902b7-01"},
            "batchNumber": {"DataType": "Number", "StringValue": "42"},
        },
    )
    moved = charge_stack.cli("redrive", "--reason", "PREVIOUSLY_FAILED")
    assert moved.returncode == 0, moved.stderr
    (copy,) = charge_stack.collect(1)
    assert copy["Body"] == body
    assert copy["MessageAttributes"] == {
        "traceparent": {"DataType": "String", "StringValue": "00-4bf92f3577b34da6-00f067aa0ba902b7-01"},
        "batchNumber": {"DataType": "Number", "StringValue": "42"},
    }
    assert charge_stack.depth(charge_stack.dlq_url) == 0


def test_an_invalid_message_names_its_charge_and_an_over_long_number_is_a_number(
    charge_stack: ChargeStack, consumers: Consumers
) -> None:
    consumers.start()
    charge_stack.send_bodies(
        [
            charge_body({**charge("CHG-OP-FLOAT-1"), "amountMinor": 25.5}),
            '{"schemaVersion":1,"chargeId":"CHG-OP-HUGE-1","amountMinor":' + "9" * 400 + "}",
        ]
    )
    letters = {attribute(m, "chargeId"): m for m in charge_stack.dead_letters(2)}
    assert set(letters) == {"CHG-OP-FLOAT-1", "CHG-OP-HUGE-1"}
    assert all(attribute(m, "failureReason") == "INVALID_MESSAGE" for m in letters.values())
    detail = attribute(letters["CHG-OP-HUGE-1"], "failureDetail") or ""
    assert detail.startswith("amountMinor: must not hold a number too large"), detail
    assert "UTF-8" not in detail


# --- list ---------------------------------------------------------------------------------


def make_attention_records(stack: ChargeStack, bank: FakeBank) -> dict[str, str]:
    """A healthy charge, a FAILED one and a DEBITED_NOTIFICATION_FAILED one."""
    bank.set_faults(permanentFailures=PERMANENT_FAILURES)
    ok, nsf = charge("CHG-OP-OK-1"), charge("CHG-OP-NSF-2", account=NSF_ACCOUNT)
    stack.send_bodies([charge_body(ok), charge_body(nsf)])
    stack.final_record(ok["chargeId"])
    stack.final_record(nsf["chargeId"])
    bank.set_faults(permanentFailures=PERMANENT_FAILURES, notificationFailureRate=1.0)
    unnotified = charge("CHG-OP-UNNOTIFIED-1")
    stack.send_body(charge_body(unnotified))
    assert stack.final_record(unnotified["chargeId"])["status"] == "DEBITED_NOTIFICATION_FAILED"
    bank.set_faults(permanentFailures=PERMANENT_FAILURES)
    return {"ok": ok["chargeId"], "nsf": nsf["chargeId"], "unnotified": unnotified["chargeId"]}


def test_list_reads_the_sparse_index_and_scans_only_for_stale_claims(
    charge_stack: ChargeStack, consumers: Consumers, fake_bank: FakeBank
) -> None:
    consumers.start()
    ids = make_attention_records(charge_stack, fake_bank)

    failed = charge_stack.cli("list", "--status", "FAILED", "--since", "1d")
    assert failed.returncode == 0, failed.stderr
    lines = json_lines(failed.stdout)
    assert [(line.get("chargeId"), line.get("failureReason")) for line in lines[:-1]] == [
        (ids["nsf"], "INSUFFICIENT_FUNDS")
    ]
    assert lines[-1] == {"event": "listed", "status": "FAILED", "count": 1}
    assert failed.stderr == "", "no Scan warning for an index query"
    print("list --status FAILED:\n" + failed.stdout)

    unnotified = json_lines(charge_stack.cli("list", "--status", "DEBITED_NOTIFICATION_FAILED").stdout)
    assert [line.get("chargeId") for line in unnotified[:-1]] == [ids["unnotified"]]
    future = json_lines(charge_stack.cli("list", "--status", "FAILED", "--since", "2099-01-01").stdout)
    assert future == [{"event": "listed", "status": "FAILED", "count": 0}]

    # The index holds exactly the records that need a person: the healthy one paid no index write.
    indexed = charge_stack.dynamodb.scan(TableName=charge_stack.table, IndexName="attention-index")["Items"]
    assert sorted(item["pk"]["S"] for item in indexed) == sorted([ids["nsf"], ids["unnotified"]])

    # A claim whose holder vanished long ago (as a crash leaves it): found by the bounded Scan.
    old = int(time.time() * 1000) - 10 * 60_000
    charge_stack.dynamodb.put_item(
        TableName=charge_stack.table,
        Item={
            "pk": {"S": "CHG-OP-STUCK-1"},
            "state": {"S": "IN_PROGRESS"},
            "leaseUntil": {"N": str(old)},
            "updatedAt": {"N": str(old)},
            "claimToken": {"S": "t"},
            "owner": {"S": "host/1/abc"},
            "fence": {"N": "1"},
        },
    )
    stuck = charge_stack.cli("list", "--status", "IN_PROGRESS", "--older-than-leases", "2")
    assert stuck.returncode == 0, stuck.stderr
    assert [line.get("chargeId") for line in json_lines(stuck.stdout)[:-1]] == ["CHG-OP-STUCK-1"]
    assert "Scan" in json.loads(stuck.stderr.splitlines()[0])["detail"]


# --- renotify -----------------------------------------------------------------------------


def test_renotify_resends_with_the_same_key_and_records_debited(
    charge_stack: ChargeStack, consumers: Consumers, fake_bank: FakeBank
) -> None:
    consumers.start()
    ids = make_attention_records(charge_stack, fake_bank)
    unnotified = ids["unnotified"]
    debit = debits_of(fake_bank, unnotified)

    fake_bank.set_faults(notificationFailureRate=1.0)
    again = renotify(charge_stack, fake_bank, unnotified, "--actor", "ops-bob")
    assert again.returncode == 5, (again.stdout, again.stderr)
    record = charge_stack.record(unnotified)
    assert record and record["status"] == "DEBITED_NOTIFICATION_FAILED"

    fake_bank.set_faults()
    sent = renotify(charge_stack, fake_bank, unnotified, "--actor", "ops-bob")
    assert sent.returncode == 0, sent.stderr
    assert json_lines(sent.stdout)[0]["audit"]["action"] == "renotify"
    record = charge_stack.record(unnotified)
    assert record and (record["state"], record["status"]) == ("DONE", "DEBITED")
    reasons = [entry["M"]["reason"]["S"] for entry in record["audit"]]
    assert len(reasons) == 2 and reasons[0].startswith("notification failed again: "), reasons
    assert reasons[1] == "notification sent"
    assert json.loads(again.stdout)["audit"]["reason"] == reasons[0]
    assert "attention" not in record, "out of the index"
    assert "payload" in record, "a debit keeps its charge for reconcile"
    (notification,) = notifications_of(fake_bank, unnotified)
    assert notification["debitId"] == record["debitRef"]
    assert debits_of(fake_bank, unnotified) == debit, "the debit is never touched"

    refused = renotify(charge_stack, fake_bank, unnotified)
    assert refused.returncode == 4 and len(refused.stderr.splitlines()) == 1, refused.stderr
    assert renotify(charge_stack, fake_bank, ids["nsf"]).returncode == 4


def test_renotify_all_failed_notifications(
    charge_stack: ChargeStack, consumers: Consumers, fake_bank: FakeBank
) -> None:
    consumers.start()
    fake_bank.set_faults(notificationFailureRate=1.0)
    events = [charge(f"CHG-OP-ALL-{i}") for i in range(3)]
    charge_stack.send_bodies([charge_body(e) for e in events])
    for e in events:
        assert charge_stack.final_record(e["chargeId"])["status"] == "DEBITED_NOTIFICATION_FAILED"
    fake_bank.set_faults()
    done = renotify(charge_stack, fake_bank, "--all-failed-notifications")
    assert done.returncode == 0, done.stderr
    assert event_line(done.stdout, "renotified")["charges"] == 3
    for e in events:
        assert charge_stack.record(e["chargeId"])["status"] == "DEBITED"
        assert len(notifications_of(fake_bank, e["chargeId"])) == 1
    assert json_lines(charge_stack.cli("list", "--status", "DEBITED_NOTIFICATION_FAILED").stdout)[-1]["count"] == 0


# --- reopen -------------------------------------------------------------------------------


def redrive_until_final(stack: ChargeStack, charge_id: str, timeout: float = 60.0) -> dict[str, Any]:
    """docs/model-check.md's procedure after a reopen: redrive the charge's dead-lettered
    copies until `status` shows it final."""

    def final() -> dict[str, Any] | None:
        record = stack.record(charge_id)
        if record and record["state"] in ("DONE", "FAILED"):
            return record
        moved = stack.cli("redrive", "--reason", "PERMANENT_DEBIT_FAILURE", "--reason", "PREVIOUSLY_FAILED")
        assert moved.returncode == 0, moved.stderr
        return None

    return wait_until(final, timeout=timeout, interval=1.0, description=f"{charge_id} final after reopen")


def test_reopen_lets_a_failed_charge_be_debited_after_a_redrive(
    charge_stack: ChargeStack, consumers: Consumers, fake_bank: FakeBank
) -> None:
    consumers.start()
    fake_bank.set_faults(permanentFailures=PERMANENT_FAILURES)
    event = charge("CHG-OP-REOPEN-1", account=NSF_ACCOUNT)
    charge_stack.send_body(charge_body(event))
    failed = charge_stack.final_record(event["chargeId"])
    assert failed["state"] == "FAILED"
    charge_stack.release(charge_stack.dead_letters(1), charge_stack.dlq_url)

    fake_bank.set_faults()  # the account was funded
    reason = "account funded 2026-12-01, ticket OPS-4711"
    reopened = charge_stack.cli("reopen", event["chargeId"], "--reason", reason, "--actor", "ops-alice")
    assert reopened.returncode == 0, reopened.stderr
    assert "redrive" in reopened.stderr, "it says what to do next"
    audit = json_lines(reopened.stdout)[0]["audit"]
    assert (audit["actor"], audit["action"], audit["reason"]) == ("ops-alice", "reopen", reason)
    status = json.loads(charge_stack.cli("status", event["chargeId"]).stdout)
    assert status["state"] == "IN_PROGRESS" and status["leaseUntil"] == "1970-01-01T00:00:00.000Z"
    assert all(ISO_MS.fullmatch(status[k]) for k in ("createdAt", "updatedAt", "expiresAt")), status
    assert ISO_MS.fullmatch(status["audit"][0]["at"]), "one time format everywhere a person reads"
    assert "status" not in status and "failureReason" not in status
    assert status["payloadHash"] == failed["payloadHash"]
    assert [(a["actor"], a["action"], a["reason"]) for a in status["audit"]] == [("ops-alice", "reopen", reason)]
    print("status after reopen:\n" + json.dumps(status, indent=2))

    record = redrive_until_final(charge_stack, event["chargeId"])
    assert (record["state"], record["status"]) == ("DONE", "DEBITED")
    assert len(debits_of(fake_bank, event["chargeId"])) == 1
    assert len(record["audit"]) == 1, "the audit trail stays with the record"

    done = charge_stack.cli("reopen", event["chargeId"], "--reason", "again")
    assert done.returncode == 4
    assert "a DONE charge is never reopened" in done.stderr and len(done.stderr.splitlines()) == 1
    assert charge_stack.cli("reopen", "CHG-OP-NEVER", "--reason", "x").returncode == 3


def test_reopen_with_resend_needs_no_redrive(charge_stack: ChargeStack, consumers: Consumers, fake_bank: FakeBank) -> None:
    consumers.start()
    fake_bank.set_faults(permanentFailures=PERMANENT_FAILURES)
    event = charge("CHG-OP-RESEND-1", account=NSF_ACCOUNT)
    charge_stack.send_body(charge_body(event))
    assert charge_stack.final_record(event["chargeId"])["state"] == "FAILED"
    fake_bank.set_faults()
    resent = charge_stack.cli("reopen", event["chargeId"], "--reason", "account funded", "--resend")
    assert resent.returncode == 0, resent.stderr
    assert event_line(resent.stdout, "resent")["chargeId"] == event["chargeId"]
    record = charge_stack.final_record(event["chargeId"])
    assert (record["state"], record["status"]) == ("DONE", "DEBITED")
    (debit,) = debits_of(fake_bank, event["chargeId"])
    assert debit["accountId"] == NSF_ACCOUNT and debit["amountMinor"] == event["amountMinor"]


def test_reopen_raced_by_other_reopens_and_a_consumer_writes_once(
    charge_stack: ChargeStack, consumers: Consumers, fake_bank: FakeBank
) -> None:
    """Three operators reopen the same FAILED charge while a consumer works through copies of
    its message: exactly one reopen is written; the others are refused with one line each,
    whichever way the race went, and the charge ends DONE with one debit and one audit entry."""
    fake_bank.set_faults(permanentFailures=PERMANENT_FAILURES)
    consumers.start(WORKERS="4")
    event = charge("CHG-OP-RACE-1", account=NSF_ACCOUNT)
    charge_stack.send_body(charge_body(event))
    assert charge_stack.final_record(event["chargeId"])["state"] == "FAILED"
    fake_bank.set_faults()

    charge_stack.send_bodies([charge_body(event)] * 10)
    env = charge_stack.env()
    racers = [
        subprocess.Popen(
            [str(binary()), "reopen", event["chargeId"], "--reason", f"operator {i}", "--actor", f"ops-{i}"],
            env={**os.environ, **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(3)
    ]
    results = [(p.wait(timeout=60), *p.communicate()) for p in racers]
    codes = sorted(code for code, _, _ in results)
    assert codes == [0, 4, 4], results
    for code, _, err in results:
        if code == 4:
            assert len(err.splitlines()) == 1 and err.startswith("reopen: refused: "), err

    record = redrive_until_final(charge_stack, event["chargeId"])
    assert (record["state"], record["status"]) == ("DONE", "DEBITED")
    assert len(debits_of(fake_bank, event["chargeId"])) == 1
    (winner,) = [out for code, out, _ in results if code == 0]
    (entry,) = record["audit"]
    assert entry["M"]["actor"]["S"] == json_lines(winner)[0]["audit"]["actor"]


# --- small things -------------------------------------------------------------------------


def test_version_usage_errors_and_status_attributes(
    charge_stack: ChargeStack, consumers: Consumers, fake_bank: FakeBank
) -> None:
    version = charge_stack.cli("--version")
    assert version.returncode == 0 and version.stdout.startswith("charge-recovery "), version
    assert "(commit " in version.stdout
    assert charge_stack.cli("redrive", "--version").stdout == version.stdout
    for args in (["redrive", "--bogus"], [], ["status"]):
        bad = charge_stack.cli(*args)
        assert bad.returncode == 2, (args, bad.stderr)
        assert len(bad.stderr.splitlines()) == 1 and bad.stderr.startswith("usage error: "), bad.stderr

    consumer = consumers.start()
    fake_bank.set_faults(permanentFailures=PERMANENT_FAILURES)
    ok, nsf = charge("CHG-OP-STATUS-1"), charge("CHG-OP-STATUS-2", account=NSF_ACCOUNT)
    charge_stack.send_bodies([charge_body(ok), charge_body(nsf)])
    charge_stack.final_record(ok["chargeId"])
    charge_stack.final_record(nsf["chargeId"])
    done = json.loads(charge_stack.cli("status", ok["chargeId"]).stdout)
    assert "failureReason" not in done and "audit" not in done
    assert done["payloadKept"] is True and "payload" not in done, "kept for reconcile, not printed"
    assert done["debitRef"] and done["status"] == "DEBITED"
    failed = json.loads(charge_stack.cli("status", nsf["chargeId"]).stdout)
    assert "debitRef" not in failed and failed["failureReason"] == "INSUFFICIENT_FUNDS"
    assert failed["payloadKept"] is True and "payload" not in failed, "no account number printed"

    check_metrics(consumer, version.stdout)


def check_metrics(consumer: Consumer, version_line: str) -> None:
    """ic_build_info names the version and commit the binary prints; process_* are read from
    /proc."""
    _, text = consumer.get("/metrics")
    version, commit = version_line.split()[1], version_line.split("(commit ")[1].rstrip(")\n")
    assert consumer.metric("ic_build_info", version=version, commit=commit) == 1
    started = consumer.metric("process_start_time_seconds")
    assert abs(started - time.time()) < 300, started
    assert consumer.metric("process_open_fds") > 3
    assert consumer.metric("process_max_fds") >= consumer.metric("process_open_fds")
    assert consumer.metric("process_resident_memory_bytes") > 1_000_000
    assert consumer.metric("process_virtual_memory_bytes") >= consumer.metric("process_resident_memory_bytes")
    assert "# TYPE process_cpu_seconds_total counter" in text
