"""Issue 23 item 3, sizes: SQS counts a message's body and its attributes against the queue's
MaximumMessageSize (a batch's total too), which the emulators do not. Here SQS is moto behind
the strict proxy (tools/local_stack/aws_proxy.py), which applies SQS's accounting, and both
queues are set to 256 KiB (moto's default is AWS's maximum, 1 MiB).

A 256 KiB invalid body leaves no room for failureReason in any DLQ copy: the consumer
quarantines the reason in the table (pk `quarantine#<body sha256>`) and sends the body alone,
and `redrive` by default leaves it in the DLQ. `send --file` batches by count and bytes and
names a line too large for the queue without losing the others. docs/design.md §5 "Sizes".
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tools.local_stack.aws_proxy import recorded_requests, start_aws_proxy
from tools.local_stack.charge_recovery import ChargeStack, Consumers, run_cli
from tools.local_stack.processes import ProcessManager, wait_until

pytestmark = pytest.mark.timeout(90)

LIMIT = 262_144


class StrictSqs:
    """The proxy in front of the stack's SQS, recording every request it forwards."""

    def __init__(self, processes: ProcessManager, stack: ChargeStack, record: Path) -> None:
        self.stack = stack
        self.record = record
        self.proxy = start_aws_proxy(processes, stack.moto.endpoint_url, service="sqs", record=record)
        # Set through the proxy, which keeps what it forwards (it would also read it, signed).
        sqs = self.proxy.sqs()
        for url in (stack.queue_url, stack.dlq_url):
            sqs.set_queue_attributes(QueueUrl=url, Attributes={"MaximumMessageSize": str(LIMIT)})
        self.record.unlink()  # only what the code under test sends

    def env(self) -> dict[str, str]:
        return {"AWS_ENDPOINT_URL_SQS": self.proxy.url}

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(args, {**self.stack.env(), **self.env()})

    def refusals(self) -> dict[str, int]:
        return {k: v for k, v in self.proxy.stats().items() if k.startswith("size.")}

    def requests(self, action: str) -> list[dict[str, Any]]:
        return recorded_requests(self.record, f"AmazonSQS.{action}")


@pytest.fixture
def strict_sqs(processes: ProcessManager, charge_stack: ChargeStack, tmp_path: Path) -> StrictSqs:
    return StrictSqs(processes, charge_stack, tmp_path / "sqs-requests.jsonl")


def test_a_body_that_fills_the_queue_is_dead_lettered_with_a_durable_reason_and_not_redriven(
    charge_stack: ChargeStack, consumers: Consumers, strict_sqs: StrictSqs
) -> None:
    body = "x" * LIMIT  # not JSON: INVALID_MESSAGE
    # The witness is strict: the body with the reason is what SQS refuses.
    with pytest.raises(ClientError) as refused:
        strict_sqs.proxy.sqs().send_message(
            QueueUrl=charge_stack.dlq_url,
            MessageBody=body,
            MessageAttributes={"failureReason": {"DataType": "String", "StringValue": "INVALID_MESSAGE"}},
        )
    assert refused.value.response["Error"]["Code"] == "InvalidParameterValue"
    strict_sqs.record.unlink()
    source_id = charge_stack.send_body(body)
    consumer = consumers.start(**strict_sqs.env())

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
    assert consumer.logged("consumer started")[0]["dlqMaxMessageSize"] == LIMIT
    # The copies too large were refused before they were sent: SQS (the proxy) refused none.
    assert strict_sqs.refusals() == {"size.send_refused": 1}, "the witness's, none of the consumer's"
    assert [r["MessageAttributes"] if "MessageAttributes" in r else {} for r in strict_sqs.requests("SendMessage")] == [{}]
    charge_stack.release([letter], charge_stack.dlq_url)

    redriven = strict_sqs.cli("redrive")
    assert redriven.returncode == 0, redriven.stderr
    lines = [json.loads(line) for line in redriven.stdout.splitlines()]
    assert lines[0]["byReason"] == {"INVALID_MESSAGE": {"moved": 0, "skipped": 1, "returned": 0}}
    assert lines[-1] == {"event": "redriven", "messages": 0}
    assert charge_stack.depth(charge_stack.dlq_url) == 1
    assert charge_stack.depth() == 0


def test_send_file_batches_by_bytes_and_names_a_line_too_large(
    charge_stack: ChargeStack, strict_sqs: StrictSqs, tmp_path: Path
) -> None:
    # Six lines of 100 KiB and a small one: ten to a batch would make 600 KiB, over the
    # queue's 256 KiB; by bytes they go two at a time, the small one with the last two.
    lines = [f'{{"n":{i},"pad":"{"p" * (100 * 1024)}"}}' for i in range(6)] + ['{"n":6}']
    too_large = "y" * (LIMIT + 1)
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join([*lines[:2], too_large, *lines[2:], ""]))

    sent = strict_sqs.cli("send", "--file", str(path))
    assert sent.returncode == 1
    assert sent.stderr.splitlines() == [
        f"send: line 3: {LIMIT + 1} bytes, over the queue's MaximumMessageSize of {LIMIT}; not sent"
    ]
    assert json.loads(sent.stdout) == {"event": "sent", "messages": 7, "failed": 1}
    batches = strict_sqs.requests("SendMessageBatch")
    totals = sorted(sum(len(e["MessageBody"].encode()) for e in b["Entries"]) for b in batches)
    assert all(total <= LIMIT for total in totals), totals
    assert sorted(len(b["Entries"]) for b in batches) == [2, 2, 3], "by bytes, not ten at a time"
    assert strict_sqs.refusals() == {}
    received = charge_stack.collect(7)
    assert sorted(json.loads(m["Body"])["n"] for m in received) == list(range(7))
