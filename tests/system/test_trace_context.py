"""Trace context end to end (docs/design.md §5): a producer's W3C `traceparent` message attribute,
or the X-Ray AWSTraceHeader system attribute SQS carries, reaches core banking and the notifier
as a `traceparent` header and is on every consumer log line of that charge. boto3 produces,
fake-bank records the header it received, the consumer's JSON log is read back.
"""

from __future__ import annotations

from typing import Any

import pytest

from charges import charge, charge_body
from tools.local_stack.charge_recovery import ChargeStack, Consumer, Consumers
from tools.local_stack.fake_bank import FakeBank
from tools.local_stack.processes import wait_until

pytestmark = pytest.mark.timeout(120)

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"
XRAY = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
XRAY_AS_W3C = "00-5759e988bd862e3fe1be46a994272793-53995c3f42cd8ad8-01"


def only(items: list[Any]) -> Any:
    assert len(items) == 1, items
    return items[0]


def bank_saw(bank: FakeBank, charge_id: str) -> tuple[str | None, str | None]:
    """The traceparent headers of the charge's debit and notification, once both exist."""
    ledger = bank.ledger()
    debits = [d for d in ledger["debits"] if d["chargeId"] == charge_id]
    notes = [n for n in ledger["notifications"] if n["chargeId"] == charge_id]
    return only(debits)["traceparent"], only(notes)["traceparent"]


def lines_of(consumer: Consumer, charge_id: str) -> list[dict[str, Any]]:
    return [line for line in consumer.logs() if line.get("chargeId") == charge_id]


def assert_traced(charge_stack: ChargeStack, consumer: Consumer, bank: FakeBank, charge_id: str, expected: str) -> None:
    assert charge_stack.final_record(charge_id)["status"] == "DEBITED"
    wait_until(lambda: len([n for n in bank.ledger()["notifications"] if n["chargeId"] == charge_id]) == 1, 30.0)
    assert bank_saw(bank, charge_id) == (expected, expected)
    lines = lines_of(consumer, charge_id)
    assert lines, "no consumer log line names the charge"
    assert {line.get("traceparent") for line in lines} == {expected}, lines


def test_a_producers_traceparent_reaches_the_bank_the_notifier_and_the_logs(
    charge_stack: ChargeStack, consumers: Consumers, fake_bank: FakeBank
) -> None:
    traced, untraced = charge("CHG-TRACE-W3C-1"), charge("CHG-TRACE-NONE-1")
    charge_stack.sqs.send_message(
        QueueUrl=charge_stack.queue_url,
        MessageBody=charge_body(traced),
        MessageAttributes={"traceparent": {"DataType": "String", "StringValue": TRACEPARENT}},
    )
    charge_stack.send_body(charge_body(untraced))
    consumer = consumers.start(WORKERS="2")

    assert_traced(charge_stack, consumer, fake_bank, traced["chargeId"], TRACEPARENT)
    # Another charge, handled by the same workers, carries nothing of the first one's trace.
    assert charge_stack.final_record(untraced["chargeId"])["status"] == "DEBITED"
    wait_until(lambda: len(fake_bank.ledger()["notifications"]) == 2, 30.0)
    assert bank_saw(fake_bank, untraced["chargeId"]) == (None, None)
    assert all("traceparent" not in line for line in lines_of(consumer, untraced["chargeId"]))
    assert all(TRACE_ID not in str(line) for line in consumer.logged("consumer started"))


def test_an_xray_trace_header_alone_is_converted_and_a_malformed_traceparent_falls_back_to_it(
    charge_stack: ChargeStack, consumers: Consumers, fake_bank: FakeBank
) -> None:
    xray_only, malformed = charge("CHG-TRACE-XRAY-1"), charge("CHG-TRACE-BAD-1")
    for event, attributes in ((xray_only, {}), (malformed, {"traceparent": {"DataType": "String", "StringValue": "00-zz"}})):
        charge_stack.sqs.send_message(
            QueueUrl=charge_stack.queue_url,
            MessageBody=charge_body(event),
            MessageAttributes=attributes,
            MessageSystemAttributes={"AWSTraceHeader": {"DataType": "String", "StringValue": XRAY}},
        )
    consumer = consumers.start(WORKERS="2")

    assert_traced(charge_stack, consumer, fake_bank, xray_only["chargeId"], XRAY_AS_W3C)
    assert_traced(charge_stack, consumer, fake_bank, malformed["chargeId"], XRAY_AS_W3C)
