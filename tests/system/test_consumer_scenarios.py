"""End-to-end scenarios of docs/design.md §3's outcome table: boto3 produces the SQS messages and
reads the table and queues, the `charge-recovery run` binary consumes, fake-bank keeps the
ledger. Every wait polls with a deadline; the proof is always what boto3 and the ledger see.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from botocore.exceptions import ClientError

from charges import charge, charge_body, payload_hash
from tools.local_stack.charge_recovery import ChargeStack, Consumers, attribute
from tools.local_stack.fake_bank import FakeBank
from tools.local_stack.processes import wait_until

pytestmark = pytest.mark.timeout(120)


def debits_of(bank: FakeBank, charge_id: str) -> list[dict[str, Any]]:
    return [d for d in bank.ledger()["debits"] if d["chargeId"] == charge_id]


def only(items: list[Any]) -> Any:
    assert len(items) == 1, items
    return items[0]


# --- 1. baseline ----------------------------------------------------------------------------


def test_one_charge_sent_five_times_is_debited_once(
    charge_stack: ChargeStack, consumers: Consumers, fake_bank: FakeBank
) -> None:
    event = charge("CHG-20261130-000001")
    consumer = consumers.start(WORKERS="4")
    charge_stack.send_bodies([charge_body(event)] * 5)

    record = charge_stack.final_record(event["chargeId"])
    charge_stack.wait_drained()

    debit = only(fake_bank.ledger()["debits"])
    assert debit["chargeId"] == event["chargeId"]
    assert debit["amountMinor"] == event["amountMinor"] and debit["replays"] == 0
    assert record["state"] == "DONE"
    assert record["status"] == "DEBITED"
    assert record["debitRef"] == debit["debitId"]
    assert record["payloadHash"] == payload_hash(event)
    assert record["fence"] == 1  # claimed once: the four duplicates never acquired it
    assert consumer.metric("ic_claim_outcomes_total", outcome="ACQUIRED") == 1
    # Each copy either found DONE or, refused while another worker of this process held the
    # claim, was settled by that worker's final write.
    assert (consumer.metric("ic_claim_outcomes_total", outcome="DUPLICATE_DONE")
            + consumer.metric("ic_copies_settled_locally_total")) == 4
    notification = only(fake_bank.ledger()["notifications"])
    assert notification["debitId"] == debit["debitId"] and notification["count"] == 1


# --- 2. invalid bodies ----------------------------------------------------------------------


def without(field: str) -> str:
    event = charge("CHG-MISSING-1")
    del event[field]
    return charge_body(event)


def with_field(**fields: Any) -> str:
    return charge_body({**charge("CHG-INVALID-1"), **fields})


# (case, body, prefix of failureDetail): the detail names the field and the rule.
INVALID_BODIES = [
    ("malformed JSON", '{"schemaVersion":1,"chargeId":"CHG-BROKEN-1",', "body: must be well-formed"),
    ("not an object", "[1,2,3]", "body: must be a JSON object"),
    ("missing field", without("accountId"), "accountId: is required"),
    ("wrong type", with_field(chargeId="CHG-WRONG-TYPE-1", amountMinor="2500"), "amountMinor: must be an integer"),
    ("zero amount", with_field(chargeId="CHG-ZERO-1", amountMinor=0), "amountMinor: must be an integer from 1"),
    ("negative amount", with_field(chargeId="CHG-NEG-1", amountMinor=-2500), "amountMinor: must be an integer from 1"),
    ("unknown currency", with_field(chargeId="CHG-CUR-1", currency="XYZ"), "currency: must be an ISO 4217"),
    ("bad chargeId characters", with_field(chargeId="CHG 1/2"), "chargeId: "),
    (
        "key given twice",
        '{"schemaVersion":1,"chargeId":"CHG-TWICE-1","chargeId":"CHG-TWICE-2","accountId":"ACC-1",'
        '"chargeType":"SMS_ALERT_FEE","amountMinor":1,"currency":"INR","dueDate":"2026-11-30"}',
        "chargeId: must not be given more than once",
    ),
    # Close to SQS's size limit, so the consumer's receive path carries a big body too.
    ("1 MB chargeId", with_field(chargeId="C" * 1_000_000), "chargeId: "),
]


# The cases whose body names a valid chargeId before (or despite) what makes it invalid. A
# chargeId given twice names none: which one would be meant is the ambiguity refused.
CHARGE_ID_OF_INVALID = {
    "malformed JSON": "CHG-BROKEN-1",
    "missing field": "CHG-MISSING-1",
    "wrong type": "CHG-WRONG-TYPE-1",
    "zero amount": "CHG-ZERO-1",
    "negative amount": "CHG-NEG-1",
    "unknown currency": "CHG-CUR-1",
}


def test_invalid_bodies_are_dead_lettered_unchanged_and_the_consumer_keeps_going(
    charge_stack: ChargeStack, consumers: Consumers, fake_bank: FakeBank
) -> None:
    consumer = consumers.start()
    bodies = [body for _, body, _ in INVALID_BODIES]
    sent_ids = [charge_stack.send_body(body) for body in bodies]

    letters = charge_stack.dead_letters(len(bodies))
    by_body = {letter["Body"]: letter for letter in letters}
    assert len(by_body) == len(bodies), "each original body, unchanged, once"
    for (case, body, detail), message_id in zip(INVALID_BODIES, sent_ids, strict=True):
        letter = by_body[body]
        assert attribute(letter, "failureReason") == "INVALID_MESSAGE", case
        assert (attribute(letter, "failureDetail") or "").startswith(detail), (case, attribute(letter, "failureDetail"))
        assert attribute(letter, "sourceMessageId") == message_id, case
        # The chargeId when the body named a valid one (design §5), else none.
        assert attribute(letter, "chargeId") == CHARGE_ID_OF_INVALID.get(case), case

    valid = charge("CHG-AFTER-INVALID-1")
    charge_stack.send_body(charge_body(valid))
    assert charge_stack.final_record(valid["chargeId"])["status"] == "DEBITED"
    charge_stack.wait_drained()
    assert only(fake_bank.ledger()["debits"])["chargeId"] == valid["chargeId"]
    assert charge_stack.records().keys() == {valid["chargeId"]}  # invalid messages never claim
    assert consumer.process.alive()
    assert consumer.metric("ic_dlq_forwards_total", reason="INVALID_MESSAGE") == len(bodies)


def test_a_body_over_one_mib_is_refused_by_sqs_at_send_time(charge_stack: ChargeStack) -> None:
    # SQS's message limit is 1 MiB (moto 5.2.1: "shorter than 1048576 bytes"), so such a body
    # never reaches the consumer; the decoder's own 1 MiB limit is covered by the C++ unit tests
    # (tests/unit/application/charge_event_decoder_test.cpp).
    oversized = with_field(padding="x" * (1024 * 1024))
    assert len(oversized.encode()) > 1024 * 1024
    with pytest.raises(ClientError) as refused:
        charge_stack.send_body(oversized)
    assert refused.value.response["Error"]["Code"] in ("InvalidParameterValue", "InvalidParameterValueException")
    assert charge_stack.depth() == 0


# --- 3. payload mismatch --------------------------------------------------------------------


def test_same_charge_id_with_another_amount_is_dead_lettered_and_never_debited(
    charge_stack: ChargeStack, consumers: Consumers, fake_bank: FakeBank
) -> None:
    first = charge("CHG-MISMATCH-1", amount=2500)
    second = {**first, "amountMinor": 9900}
    consumers.start()
    charge_stack.send_body(charge_body(first))
    recorded = charge_stack.final_record(first["chargeId"])
    charge_stack.wait_drained()

    mismatch_id = charge_stack.send_body(charge_body(second))
    letter = only(charge_stack.dead_letters(1))
    charge_stack.wait_drained()

    assert letter["Body"] == charge_body(second)
    assert attribute(letter, "failureReason") == "PAYLOAD_MISMATCH"
    assert attribute(letter, "chargeId") == first["chargeId"]
    assert attribute(letter, "sourceMessageId") == mismatch_id
    assert payload_hash(first) in (attribute(letter, "failureDetail") or "")
    debit = only(fake_bank.ledger()["debits"])
    assert debit["amountMinor"] == 2500 and debit["replays"] == 0
    assert fake_bank.ledger()["stats"]["conflicts"] == 0  # the bank was never asked
    after = charge_stack.record(first["chargeId"])
    assert after == recorded
    assert after["payloadHash"] == payload_hash(first) != payload_hash(second)


# --- 4. permanent bank failure, then its redelivery ---------------------------------------


def test_permanent_debit_failure_is_final_and_its_redelivery_is_not_debited_again(
    charge_stack: ChargeStack, consumers: Consumers, fake_bank: FakeBank
) -> None:
    fake_bank.set_faults(permanentFailures={"ACC-CLOSED": "ACCOUNT_CLOSED"})
    event = charge("CHG-CLOSED-1", account="ACC-CLOSED-0001")
    consumers.start()
    first_id = charge_stack.send_body(charge_body(event))

    record = charge_stack.final_record(event["chargeId"])
    assert record["state"] == "FAILED"
    assert record["status"] == "FAILED_PERMANENT"
    assert record["failureReason"] == "ACCOUNT_CLOSED"
    assert "debitRef" not in record
    letter = only(charge_stack.dead_letters(1))
    assert letter["Body"] == charge_body(event)
    assert attribute(letter, "failureReason") == "PERMANENT_DEBIT_FAILURE"
    assert "ACCOUNT_CLOSED" in (attribute(letter, "failureDetail") or "")
    assert attribute(letter, "chargeId") == event["chargeId"]
    assert attribute(letter, "sourceMessageId") == first_id
    charge_stack.delete([letter], charge_stack.dlq_url)
    assert fake_bank.ledger()["stats"]["rejected"] == 1

    again_id = charge_stack.send_body(charge_body(event))
    letter = only(charge_stack.dead_letters(1))
    charge_stack.wait_drained()
    assert attribute(letter, "failureReason") == "PREVIOUSLY_FAILED"
    assert "ACCOUNT_CLOSED" in (attribute(letter, "failureDetail") or "")
    assert attribute(letter, "sourceMessageId") == again_id
    ledger = fake_bank.ledger()
    assert ledger["stats"]["rejected"] == 1, "the redelivery must not call the bank"
    assert ledger["debits"] == []
    assert charge_stack.record(event["chargeId"]) == record


# --- 5. notification failure ----------------------------------------------------------------


def test_notification_failure_is_recorded_and_never_re_debits(
    charge_stack: ChargeStack, consumers: Consumers, fake_bank: FakeBank
) -> None:
    fake_bank.set_faults(notificationFailureRate=1.0)
    event = charge("CHG-NOTIFY-FAILS-1")
    consumers.start()
    charge_stack.send_body(charge_body(event))

    record = charge_stack.final_record(event["chargeId"])
    charge_stack.wait_drained()
    debit = only(fake_bank.ledger()["debits"])
    assert record["state"] == "DONE"
    assert record["status"] == "DEBITED_NOTIFICATION_FAILED"
    assert record["debitRef"] == debit["debitId"]
    assert debit["replays"] == 0
    stats = fake_bank.ledger()["stats"]
    assert stats["notificationFailures"] >= 1 and stats["notifications"] == 0
    assert charge_stack.depth(charge_stack.dlq_url) == 0


# --- 5b. transient bank failures -----------------------------------------------------------


def test_transient_debit_failures_release_the_claim_and_are_retried_to_one_debit(
    charge_stack: ChargeStack, consumers: Consumers, fake_bank: FakeBank
) -> None:
    fake_bank.set_faults(transientErrorRate=0.4)  # commits nothing; fixed seed, one worker
    events = [charge(f"CHG-TRANSIENT-{i}") for i in range(3)]
    consumer = consumers.start(WORKERS="1")
    charge_stack.send_bodies(charge_body(e) for e in events)

    records = {e["chargeId"]: charge_stack.final_record(e["chargeId"], timeout=60) for e in events}
    charge_stack.wait_drained()
    ledger = fake_bank.ledger()
    assert ledger["stats"]["transientErrors"] >= 1, "the fault must have fired for the test to mean anything"
    assert sorted(d["chargeId"] for d in ledger["debits"]) == sorted(records)
    assert all(d["replays"] == 0 for d in ledger["debits"])
    for record in records.values():
        assert record["state"] == "DONE" and record["status"] == "DEBITED"
    # Each transient failure released the claim and the redelivery reclaimed it (fence + 1).
    assert sum(r["fence"] - 1 for r in records.values()) == ledger["stats"]["transientErrors"]
    assert consumer.metric("ic_debits_total", result="unavailable") == ledger["stats"]["transientErrors"]


# --- 6. a bank slower than the lease ---------------------------------------------------------


def test_duplicate_of_a_debit_slower_than_the_lease_waits_and_is_then_acked(
    charge_stack: ChargeStack, consumers: Consumers, fake_bank: FakeBank
) -> None:
    fake_bank.set_faults(latencyMs=charge_stack.lease_seconds * 1000 + 1000)  # each call outlasts the lease
    event = charge("CHG-SLOW-BANK-1")
    consumer = consumers.start(WORKERS="2")
    charge_stack.send_bodies([charge_body(event)] * 2)

    record = charge_stack.final_record(event["chargeId"], timeout=40)
    charge_stack.wait_drained()
    debit = only(fake_bank.ledger()["debits"])
    assert record["state"] == "DONE" and record["status"] == "DEBITED"
    assert record["debitRef"] == debit["debitId"] and debit["replays"] == 0
    assert record["fence"] == 1  # the heartbeat kept the claim: no second claim succeeded
    handled = consumer.logged("charge handled", chargeId=event["chargeId"])  # one per delivery
    in_progress = {line["messageId"] for line in handled if line["claim"] == "DUPLICATE_IN_PROGRESS"}
    assert in_progress, handled
    # The copy that found the claim in progress was not acked then: the other worker of this
    # process held it, so the copy waited (a lease at a time, handed back in between) and was
    # settled by that worker's final write.
    settled = [line for line in handled if line["outcome"] == "ack" and line["waitedMs"] > 0]
    assert {line["messageId"] for line in settled} & in_progress, handled
    assert consumer.metric("ic_copies_settled_locally_total") == 1
    assert consumer.metric("ic_claim_outcomes_total", outcome="DUPLICATE_IN_PROGRESS") >= 1
    assert consumer.metric("ic_heartbeats_total", extended="true") >= 1


# --- 7. a consumer killed in the middle of a debit ------------------------------------------


def test_charge_of_a_consumer_killed_mid_debit_is_completed_by_another_without_a_second_debit(
    charge_stack: ChargeStack, consumers: Consumers, fake_bank: FakeBank
) -> None:
    event = charge("CHG-CRASH-1")
    # The bank commits the debit but answers only after 8 s: the consumer dies meanwhile.
    fake_bank.set_faults(commitThenTimeout={"chargeIds": [event["chargeId"]], "delayMs": 8000, "mode": "delay"})
    doomed = consumers.start("consumer-doomed")
    charge_stack.send_body(charge_body(event))
    wait_until(lambda: debits_of(fake_bank, event["chargeId"]), timeout=20, description="debit committed")
    claimed = charge_stack.record(event["chargeId"])
    assert claimed and claimed["state"] == "IN_PROGRESS" and claimed["fence"] == 1

    assert consumers.kill(doomed) == -9
    survivor = consumers.start("consumer-survivor")
    record = charge_stack.final_record(event["chargeId"], timeout=30)
    charge_stack.wait_drained()

    debit = only(fake_bank.ledger()["debits"])
    assert debit["replays"] >= 1, "the survivor's debit must have been answered as a replay"
    assert record["state"] == "DONE" and record["status"] == "DEBITED"
    assert record["debitRef"] == debit["debitId"]
    assert record["fence"] >= 2
    assert record["owner"] != claimed["owner"]
    survivor.process.wait_for(lambda: survivor.logged("charge handled", chargeId=event["chargeId"], replayed=True,
                                                      status="DEBITED"), 10.0, "the replayed debit's line")


# --- 8. a DONE charge redriven from the DLQ -------------------------------------------------


def test_done_charge_redriven_from_the_dlq_is_acked_without_a_debit(
    charge_stack: ChargeStack, consumers: Consumers, fake_bank: FakeBank
) -> None:
    event = charge("CHG-REDRIVE-DONE-1")
    consumer = consumers.start()
    charge_stack.send_body(charge_body(event))
    record = charge_stack.final_record(event["chargeId"])
    charge_stack.wait_drained()

    charge_stack.send_body(charge_body(event), queue_url=charge_stack.dlq_url)
    redriven = charge_stack.cli("redrive")
    assert redriven.returncode == 0, redriven.stderr
    assert json.loads(redriven.stdout.splitlines()[-1]) == {"event": "redriven", "messages": 1}

    wait_until(
        lambda: consumer.metric("ic_claim_outcomes_total", outcome="DUPLICATE_DONE") == 1,
        timeout=30,
        description="redriven copy seen as DUPLICATE_DONE",
    )
    charge_stack.wait_drained()
    assert charge_stack.depth(charge_stack.dlq_url) == 0
    assert only(fake_bank.ledger()["debits"])["replays"] == 0
    assert charge_stack.record(event["chargeId"]) == record
