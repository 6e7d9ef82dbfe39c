"""Issue 23: a stop while a long poll is waiting. SQS's poll outlives its client's connection
(aws-sdk-go-v2#2068, aws-sdk-java-v2#1395, aws-sdk-js#2350): a message that arrives after the
client has given up is still given to that poll and stays invisible, received by nobody, for
the visibility timeout. The strict proxy (tools/local_stack/aws_proxy.py) behaves so: it
finishes a forwarded poll whether or not its client is still there. The consumer lets a poll
answer for 500 ms after SIGTERM and hands back what it brings (visibility 0); only a poll still
empty then is cut (docs/design.md §4, "Shutdown")."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import botocore.exceptions
import pytest

from charges import charge, charge_body
from tools.local_stack.aws_proxy import recorded_requests, start_aws_proxy
from tools.local_stack.charge_recovery import ChargeStack, Consumers, provision_stack
from tools.local_stack.fake_bank import FakeBank
from tools.local_stack.moto import MotoServer
from tools.local_stack.processes import ProcessManager, wait_until

pytestmark = pytest.mark.timeout(90)

LEASE = 30  # the visibility a stranded message would wait out


@pytest.fixture
def stack(moto: MotoServer) -> ChargeStack:
    return provision_stack(moto, lease_seconds=LEASE)


def in_flight_and_visible(stack: ChargeStack) -> tuple[int, int]:
    return stack.depth() - stack.visible(), stack.visible()


def test_a_poll_whose_client_gave_up_still_takes_a_message(stack: ChargeStack, processes: ProcessManager) -> None:
    """The proxy is AWS here, not the emulator: the control for the consumer's test below."""
    proxy = start_aws_proxy(processes, stack.moto.endpoint_url, service="sqs")
    impatient = proxy.sqs(read_timeout=1, retries={"max_attempts": 1})
    with pytest.raises(botocore.exceptions.ReadTimeoutError):
        impatient.receive_message(QueueUrl=stack.queue_url, WaitTimeSeconds=20)
    stack.send_bodies([charge_body(charge("CHG-20261203-STRAND"))])
    wait_until(lambda: in_flight_and_visible(stack) == (1, 0), timeout=10, description="taken by the abandoned poll")


def test_sigterm_during_a_long_poll_hands_back_what_the_poll_brings(
    stack: ChargeStack, processes: ProcessManager, fake_bank: FakeBank, tmp_path: Path
) -> None:
    record = tmp_path / "sqs.jsonl"
    proxy = start_aws_proxy(processes, stack.moto.endpoint_url, service="sqs", record=record)
    consumers = Consumers(processes, stack, fake_bank)
    consumer = consumers.start(AWS_ENDPOINT_URL_SQS=proxy.url)
    wait_until(lambda: recorded_requests(record, "AmazonSQS.ReceiveMessage"), timeout=10, description="the idle long poll under way")

    os.killpg(consumer.pid, signal.SIGTERM)
    stack.send_bodies([charge_body(charge("CHG-20261203-LATE"))])  # arrives during the drain
    wait_until(lambda: not consumer.process.alive(), timeout=10, description="the consumer exits")
    assert processes.stop(consumer.process) == 0

    assert in_flight_and_visible(stack) == (0, 1), "handed back, not stranded for the visibility timeout"
    assert consumer.logged("returned unstarted messages to the queue", count=1)
    assert fake_bank.ledger()["debits"] == [], "nothing starts after the stop"
    (message,) = stack.sqs.receive_message(
        QueueUrl=stack.queue_url, MessageSystemAttributeNames=["ApproximateReceiveCount"], WaitTimeSeconds=1
    )["Messages"]
    assert message["Attributes"]["ApproximateReceiveCount"] == "2", "received once by the draining poll"
