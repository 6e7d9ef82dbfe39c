"""What `run` logs about itself (issue 24): the `consumer started` line names the effective
endpoints, region, credential source and every non-default setting, and a dependency that
stays unreachable is one warning per window with the count held back, not one per retry."""

from __future__ import annotations

import json
import socket
import time

from tools.local_stack.charge_recovery import ChargeStack, Consumers
from tools.local_stack.processes import wait_until


def closed_port() -> int:
    """A port nothing listens on: bound, then released (connections to it are refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_consumer_started_names_endpoints_credentials_and_non_default_settings(
    charge_stack: ChargeStack, consumers: Consumers
) -> None:
    consumer = consumers.start(WORKERS="3", RECEIVERS="1")
    started = consumer.started
    endpoint = charge_stack.env()["AWS_ENDPOINT_URL"]
    assert started["sqsEndpoint"] == started["dynamodbEndpoint"] == started["stsEndpoint"] == endpoint
    assert started["region"] == charge_stack.env()["AWS_REGION"]
    assert started["awsIdentitySource"] == "environment", started
    assert started["receivers"] == 1 and started["workers"] == 3
    settings = dict(item.split("=", 1) for item in started["nonDefaultSettings"].split(" "))
    assert settings["WORKERS"] == "3" and settings["RECEIVERS"] == "1"
    assert settings["AWS_ENDPOINT_URL"] == endpoint
    assert "ADMIN_ADDR" in settings and "LOG_LEVEL" not in settings, "info is the default"
    assert "SECRET" not in json.dumps(started) and "AWS_ACCESS_KEY_ID" not in settings, "never a credential"


def test_an_unreachable_sqs_warns_once_per_window_with_a_count(charge_stack: ChargeStack, consumers: Consumers) -> None:
    consumer = consumers.start(AWS_ENDPOINT_URL_SQS=f"http://127.0.0.1:{closed_port()}", RECEIVERS="1")
    assert consumer.started["sqsEndpoint"].startswith("http://127.0.0.1:"), "the effective endpoint, not the general one"
    wait_until(lambda: consumer.metric("ic_receive_errors_total") >= 5, timeout=30, description="five failed receives")
    time.sleep(1)  # more failures, which must not each log a line
    log = consumer.process.json_lines("stderr")
    receive = [line for line in log if line.get("msg") == "receive failed; backing off"]
    retried = [line for line in log if line.get("msg") == "AWS call will be retried" and line.get("service") == "sqs"]
    errors = consumer.metric("ic_receive_errors_total")
    assert errors >= 5
    # The test lasts well under the 30 s window: one line per error code and per retried call.
    assert len(receive) == len({line["code"] for line in receive}), receive
    assert all(line["suppressed"] == 0 for line in receive)
    keys = [(line["operation"], line["result"]) for line in retried]
    assert len(keys) == len(set(keys)), retried
    assert consumer.metric("ic_aws_retries_total", service="sqs") > len(retried), "held back, still counted"
