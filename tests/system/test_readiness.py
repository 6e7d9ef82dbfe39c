"""Readiness that tells the truth (issue 10, defects 1 and 2; docs/design.md §5 "Admin
endpoints and telemetry"): ready as soon as the start-up probes answer, 503 naming the failing
dependency while a queue or the table is gone, back on recovery; queue depths as gauges;
warnings about the source queue's settings; a malformed endpoint stops start-up with one line."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from tools.local_stack.charge_recovery import ChargeStack, Consumer, Consumers, provision_stack, run_cli
from tools.local_stack.fake_bank import FakeBank
from tools.local_stack.moto import MotoServer
from tools.local_stack.processes import ProcessManager, wait_until

PROBE_INTERVAL = "1"  # seconds: the tests wait for a probe round, not for the default 15 s


def readiness(consumer: Consumer) -> tuple[int, dict[str, Any]]:
    status, body = consumer.get("/health/ready")
    return status, json.loads(body)


def wait_ready(consumer: Consumer, timeout: float = 15.0) -> None:
    wait_until(lambda: readiness(consumer)[0] == 200, timeout=timeout, interval=0.05, description="/health/ready 200")


def wait_failing(consumer: Consumer, dependency: str, timeout: float = 15.0) -> dict[str, Any]:
    def failing() -> dict[str, Any] | None:
        status, body = readiness(consumer)
        check = body["checks"][dependency]
        return check if status == 503 and not check["ok"] else None

    return wait_until(failing, timeout=timeout, interval=0.05, description=f"/health/ready 503 on {dependency}")


def queue_name(url: str) -> str:
    return url.rstrip("/").rsplit("/", 1)[-1]


def test_an_idle_consumer_is_ready_without_waiting_for_its_first_receive(
    charge_stack: ChargeStack, consumers: Consumers
) -> None:
    consumer = consumers.start()
    wait_ready(consumer, timeout=10)
    # The first long poll on the empty queue lasts WaitTimeSeconds=20 and is still running:
    # readiness came from the start-up probes, not from a receive.
    assert consumer.metric("ic_aws_requests_total", operation="ReceiveMessage") == 0
    _, body = readiness(consumer)
    dependencies = {"queue", "dlq", "table", "receive", "store"}
    circuits = {"circuit_debit", "circuit_notify", "circuit_store"}
    assert set(body["checks"]) == dependencies | circuits | {"credentials"}
    assert body["checks"]["credentials"] == {"ok": True, "detail": "valid"}, body["checks"]["credentials"]
    assert consumer.metric("ic_ready") == 1
    for dependency in dependencies:
        assert consumer.metric("ic_dependency_up", dependency=dependency) == 1, dependency
    # The circuits are in the body for a person; they never make a process unready (§3).
    for circuit in circuits:
        assert body["checks"][circuit]["ok"] is True, body["checks"][circuit]
        assert body["checks"][circuit]["detail"] == "closed", body["checks"][circuit]


def test_a_deleted_queue_makes_it_not_ready_until_the_queue_is_back(charge_stack: ChargeStack, consumers: Consumers) -> None:
    consumer = consumers.start(PROBE_INTERVAL_SECONDS=PROBE_INTERVAL)
    wait_ready(consumer)
    sqs = charge_stack.sqs
    attributes = sqs.get_queue_attributes(QueueUrl=charge_stack.queue_url, AttributeNames=["All"])["Attributes"]
    sqs.delete_queue(QueueUrl=charge_stack.queue_url)

    check = wait_failing(consumer, "queue")
    assert "NonExistentQueue" in check["code"] or "QueueDoesNotExist" in check["code"], check
    assert consumer.metric("ic_ready") == 0
    assert consumer.metric("ic_dependency_up", dependency="queue") == 0
    assert consumer.logged("not ready")

    kept = {k: v for k, v in attributes.items() if k in ("VisibilityTimeout", "RedrivePolicy", "MessageRetentionPeriod")}
    sqs.create_queue(QueueName=queue_name(charge_stack.queue_url), Attributes=kept)
    wait_ready(consumer)
    assert consumer.metric("ic_dependency_up", dependency="queue") == 1


def test_a_deleted_table_makes_it_not_ready_naming_the_table(charge_stack: ChargeStack, consumers: Consumers) -> None:
    consumer = consumers.start(PROBE_INTERVAL_SECONDS=PROBE_INTERVAL)
    wait_ready(consumer)
    charge_stack.dynamodb.delete_table(TableName=charge_stack.table)
    check = wait_failing(consumer, "table")
    assert check["code"] == "ResourceNotFoundException", check
    assert consumer.metric("ic_dependency_up", dependency="table") == 0


def test_queue_depths_are_exported_as_gauges(charge_stack: ChargeStack, consumers: Consumers) -> None:
    consumer = consumers.start(PROBE_INTERVAL_SECONDS=PROBE_INTERVAL)
    charge_stack.send_bodies(['{"parked":true}'] * 3, queue_url=charge_stack.dlq_url)
    wait_until(
        lambda: consumer.metric("ic_queue_messages", queue="dlq", state="visible") == 3,
        timeout=15,
        interval=0.1,
        description="ic_queue_messages{queue=dlq,state=visible} 3",
    )
    for state in ("visible", "in_flight", "delayed"):
        assert f'ic_queue_messages{{queue="source",state="{state}"}}' in consumer.get("/metrics")[1], state


def test_queue_settings_that_undermine_the_claim_are_warned_about_at_start_up(
    moto: MotoServer, processes: ProcessManager, fake_bank: FakeBank
) -> None:
    stack = provision_stack(moto, lease_seconds=3, max_receive_count=2)
    consumers = Consumers(processes, stack, fake_bank)
    try:
        consumer = consumers.start(LEASE_SECONDS="5")
        wait_ready(consumer)

        def warnings() -> list[dict[str, Any]]:
            return [line for line in consumer.logs() if line.get("level") == "warn" and "leaseSeconds" in line]

        wait_until(lambda: len(warnings()) == 2, timeout=10, description="two start-up warnings")
        lease, receive_count = sorted(warnings(), key=lambda line: line["msg"])
        assert lease["msg"].startswith("LEASE_SECONDS exceeds the source queue's VisibilityTimeout"), lease
        assert (lease["leaseSeconds"], lease["visibilityTimeoutSeconds"]) == (5, 3)
        assert "maxReceiveCount is below 3" in receive_count["msg"], receive_count
        assert receive_count["maxReceiveCount"] == 2
    finally:
        assert all(code == 0 for code in consumers.stop_all().values())


def test_a_sound_queue_gets_no_warning(charge_stack: ChargeStack, consumers: Consumers) -> None:
    consumer = consumers.start()
    wait_ready(consumer)
    consumers.stop(consumer)
    assert not [line for line in consumer.logs() if "leaseSeconds" in line and line.get("level") == "warn"]


@pytest.mark.parametrize(
    "setting", ["AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_SQS", "AWS_ENDPOINT_URL_DYNAMODB", "CHARGE_QUEUE_URL", "CORE_BANKING_URL"]
)
def test_a_malformed_url_setting_stops_start_up_with_one_line(
    setting: str, charge_stack: ChargeStack, fake_bank: FakeBank
) -> None:
    """Issue 10, defect 2: AWS_ENDPOINT_URL="not a url" used to log "consumer started" and then
    abort with std::terminate from the table prober's thread."""
    env = {**charge_stack.env(), **fake_bank.env(), "ADMIN_ADDR": "127.0.0.1:0", setting: "not a url"}
    started = time.monotonic()
    result = run_cli(["run"], env, timeout=30)
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"configuration error: {setting}: must be an http:// or https:// URL"), result.stderr
    assert time.monotonic() - started < 10, "it stops at start-up, before any AWS call"
