"""Issue 23 item 3, sizes: SQS counts a message's body and its attributes against the queue's
MaximumMessageSize (a batch's total too), which the emulators do not. A 256 KiB invalid body on
a 256 KiB queue leaves no room for failureReason in any DLQ copy: the consumer quarantines the
reason in the table (pk `quarantine#<body sha256>`) and sends the body alone, and `redrive` by
default leaves it in the DLQ. `send --file` batches by count and bytes and names a line too
large for the queue without losing the others. docs/design.md §5 "Sizes".
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tools.local_stack.charge_recovery import ChargeStack, Consumers
from tools.local_stack.processes import wait_until

pytestmark = pytest.mark.timeout(90)

LIMIT = 262_144  # 256 KiB, set on both queues (moto's default is AWS's maximum, 1 MiB)


def limit_queues(stack: ChargeStack) -> None:
    for url in (stack.queue_url, stack.dlq_url):
        stack.sqs.set_queue_attributes(QueueUrl=url, Attributes={"MaximumMessageSize": str(LIMIT)})


def test_a_body_that_fills_the_queue_is_dead_lettered_with_a_durable_reason_and_not_redriven(
    charge_stack: ChargeStack, consumers: Consumers
) -> None:
    limit_queues(charge_stack)
    body = "x" * LIMIT  # not JSON: INVALID_MESSAGE
    source_id = charge_stack.send_body(body)
    consumer = consumers.start()

    [letter] = charge_stack.dead_letters(1)
    assert letter["Body"] == body
    assert letter.get("MessageAttributes", {}) == {}, "the body alone fills the limit"
    wait_until(lambda: charge_stack.depth() == 0, timeout=10, interval=0.2, description="source deleted")
    record = charge_stack.record("quarantine#" + hashlib.sha256(body.encode()).hexdigest())
    assert record is not None
    assert record["recordType"] == "QUARANTINE"
    assert record["failureReason"] == "INVALID_MESSAGE"
    assert record["sourceMessageId"] == source_id
    assert record["expiresAt"] > record["quarantinedAt"] // 1000, "TTL set"
    assert consumer.metric("ic_dlq_quarantined_total", reason="INVALID_MESSAGE") == 1
    assert len(consumer.logged("no DLQ copy can carry the reason; quarantined it, sending the body alone")) == 1
    started = consumer.logged("consumer started")[0]
    assert started["dlqMaxMessageSize"] == LIMIT
    charge_stack.release([letter], charge_stack.dlq_url)

    redriven = charge_stack.cli("redrive")
    assert redriven.returncode == 0, redriven.stderr
    lines = [json.loads(line) for line in redriven.stdout.splitlines()]
    assert lines[0]["byReason"] == {"INVALID_MESSAGE": {"moved": 0, "skipped": 1, "returned": 0}}
    assert lines[-1] == {"event": "redriven", "messages": 0}
    assert charge_stack.depth(charge_stack.dlq_url) == 1
    assert charge_stack.depth() == 0


def test_send_file_batches_by_bytes_and_names_a_line_too_large(charge_stack: ChargeStack, tmp_path: Path) -> None:
    limit_queues(charge_stack)
    # Six lines of 200 KiB: in one batch (as `send` once sent them) they would exceed even the
    # 1 MiB batch total moto applies whatever the queue's limit; by the queue's, each goes alone.
    lines = [f'{{"n":{i},"pad":"{"p" * (200 * 1024)}"}}' for i in range(6)]
    too_large = "y" * (LIMIT + 1)
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join([*lines[:2], too_large, *lines[2:], ""]))

    sent = charge_stack.cli("send", "--file", str(path))
    assert sent.returncode == 1
    assert sent.stderr.splitlines() == [
        f"send: line 3: {LIMIT + 1} bytes, over the queue's MaximumMessageSize of {LIMIT}; not sent"
    ]
    assert json.loads(sent.stdout) == {"event": "sent", "messages": 6, "failed": 1}
    received = charge_stack.collect(6)
    assert sorted(json.loads(m["Body"])["n"] for m in received) == [0, 1, 2, 3, 4, 5]
