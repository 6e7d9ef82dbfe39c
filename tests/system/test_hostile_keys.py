"""Issue 10, defect 3: a producer's repeated key is echoed into failureDetail. A 200 KB key, or
one holding control characters, must reach the DLQ bounded (at most 256 characters) and escaped
into SQS's attribute alphabet, and the consumer's log line must stay small. Producer attributes
that do not fit next to ours are logged and counted. boto3 reads what moto holds.
"""

from __future__ import annotations

import json

import pytest

from tools.local_stack.charge_recovery import ChargeStack, Consumers, attribute
from tools.local_stack.processes import wait_until

pytestmark = pytest.mark.timeout(120)

LONG_KEY = "k" * 200_000
# JSON escapes, so the body is valid JSON whose key holds U+0001 and ESC.
CONTROL_KEY = "\\u0001\\u001b[31m"
BODIES = {
    "long": '{"%s":1,"%s":2}' % (LONG_KEY, LONG_KEY),
    "control": '{"%s":1,"%s":2}' % (CONTROL_KEY, CONTROL_KEY),
}


def sqs_safe(text: str) -> bool:
    return all(c in "\t\n\r" or 0x20 <= ord(c) <= 0xD7FF or 0xE000 <= ord(c) <= 0xFFFD or ord(c) >= 0x10000 for c in text)


def test_a_hostile_repeated_key_reaches_the_dlq_bounded_and_escaped(charge_stack: ChargeStack, consumers: Consumers) -> None:
    consumer = consumers.start()
    sent = {name: charge_stack.send_body(body) for name, body in BODIES.items()}

    letters = {attribute(letter, "sourceMessageId"): letter for letter in charge_stack.dead_letters(len(BODIES))}
    details = {name: attribute(letters[message_id], "failureDetail") or "" for name, message_id in sent.items()}
    for name, detail in details.items():
        assert attribute(letters[sent[name]], "failureReason") == "INVALID_MESSAGE", name
        assert letters[sent[name]]["Body"] == BODIES[name], "the body travels unchanged"
        assert len(detail) <= 256, (name, len(detail))
        assert sqs_safe(detail) and all(ord(c) >= 0x20 for c in detail), (name, detail)
        assert detail.endswith("must not be given more than once"), (name, detail)
    assert details["long"].startswith("kkkk") and "..." in details["long"]
    assert details["control"] == "\\u0001\\u001b[31m: must not be given more than once"

    charge_stack.wait_drained()
    logged = consumer.logged("dead-lettering")
    assert {line["messageId"] for line in logged} == set(sent.values())
    assert all(len(json.dumps(line)) < 4096 for line in logged), "no line carries the 200 KB key"
    assert consumer.metric("ic_dlq_forwards_total", reason="INVALID_MESSAGE") == len(BODIES)


def test_producer_attributes_beyond_the_limit_are_logged_and_counted(charge_stack: ChargeStack, consumers: Consumers) -> None:
    consumer = consumers.start()
    # INVALID_MESSAGE carries three of ours (no chargeId), which leaves room for seven.
    attributes = {f"p{i}": {"DataType": "String", "StringValue": "v"} for i in range(9)}
    message_id = charge_stack.sqs.send_message(
        QueueUrl=charge_stack.queue_url, MessageBody="not json", MessageAttributes=attributes
    )["MessageId"]

    (letter,) = charge_stack.dead_letters(1)
    assert attribute(letter, "sourceMessageId") == message_id
    assert len(letter["MessageAttributes"]) == 10
    wait_until(lambda: consumer.logged("producer attributes left out of the DLQ copy"), timeout=10, interval=0.1, description="the log line")
    (line,) = consumer.logged("producer attributes left out of the DLQ copy")
    assert line["messageId"] == message_id and line["count"] == 2 and line["attributes"] == "p7,p8"
    assert consumer.metric("ic_dlq_attributes_dropped_total") == 2
