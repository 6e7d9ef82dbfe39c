"""The AWS-semantics proxy (tools/local_stack/aws_proxy.py) on ElasticMQ, dynalite and moto: SQS's size
accounting with AWS's error shapes, the fault mode's errors and resets, and the recording."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from botocore.exceptions import ClientError, ConnectionClosedError, EndpointConnectionError

from tools.local_stack.aws_proxy import Faults, message_size, start_aws_proxy
from tools.local_stack.emulators import Emulator
from tools.local_stack.moto import MotoServer
from tools.local_stack.processes import ProcessManager

pytestmark = pytest.mark.timeout(60)

NO_RETRIES = {"retries": {"max_attempts": 1, "mode": "standard"}}


def test_message_size_counts_body_and_every_attribute_name_type_and_value() -> None:
    attributes = {"failureReason": {"DataType": "String", "StringValue": "é" * 3},
                  "blob": {"DataType": "Binary", "BinaryValue": "AAEC"}}
    assert message_size("ab", attributes) == 2 + (13 + 6 + 6) + (4 + 6 + 3)


def test_sqs_sizes_are_held_against_the_queue_limit(processes: ProcessManager, elasticmq: Emulator, tmp_path: Path) -> None:
    record = tmp_path / "requests.jsonl"
    proxy = start_aws_proxy(processes, elasticmq.endpoint_url, service="sqs", record=record, batch_limit=5000)
    sqs = proxy.sqs(**NO_RETRIES)
    url = sqs.create_queue(QueueName="proxy-sizes", Attributes={"MaximumMessageSize": "1024"})["QueueUrl"]
    assert sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]["MaximumMessageSize"] == "1024"

    sqs.send_message(QueueUrl=url, MessageBody="x" * 1024)  # exactly the limit: body alone
    reason = {"failureReason": {"DataType": "String", "StringValue": "too big"}}
    with pytest.raises(ClientError) as refused:
        sqs.send_message(QueueUrl=url, MessageBody="x" * 1000, MessageAttributes=reason)
    error = refused.value.response["Error"]
    assert (error["Code"], error["Type"]) == ("InvalidParameterValue", "Sender")
    assert "shorter than 1024 bytes" in error["Message"]

    batch = sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": "small", "MessageBody": "x" * 10},
                                                          {"Id": "big", "MessageBody": "x" * 1025}])
    assert [e["Id"] for e in batch["Successful"]] == ["small"]
    assert [(e["Id"], e["Code"], e["SenderFault"]) for e in batch["Failed"]] == [("big", "InvalidParameterValue", True)]

    with pytest.raises(ClientError) as too_long:
        sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": str(i), "MessageBody": "x" * 1000} for i in range(6)])
    assert too_long.value.response["Error"]["Code"] == "AWS.SimpleQueueService.BatchRequestTooLong"
    assert "You have sent 6000 bytes" in too_long.value.response["Error"]["Message"]

    depth = elasticmq.sqs().get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
    assert depth["Attributes"]["ApproximateNumberOfMessages"] == "2"
    assert proxy.stats() == {"size.send_refused": 1, "size.entry_refused": 1, "size.batch_refused": 1}
    targets = [dict(r["headers"]).get("X-Amz-Target") for r in map(json.loads, record.read_text().splitlines())]
    assert targets.count("AmazonSQS.SendMessageBatch") == 2 and "AmazonSQS.CreateQueue" in targets


def test_fault_mode_throttles_in_each_services_words_and_resets_after_applying(
        processes: ProcessManager, elasticmq: Emulator, dynalite: Emulator) -> None:
    sqs_proxy = start_aws_proxy(processes, elasticmq.endpoint_url, service="sqs", faults=Faults(throttle=1.0, seed=3))
    ddb_proxy = start_aws_proxy(processes, dynalite.endpoint_url, service="dynamodb", faults=Faults(throttle=1.0, error500=0.0))
    sqs, ddb = sqs_proxy.sqs(**NO_RETRIES), ddb_proxy.dynamodb(**NO_RETRIES)
    sqs_codes, ddb_codes = set(), set()
    for _ in range(12):
        with pytest.raises(ClientError) as e:
            sqs.list_queues()
        sqs_codes.add(e.value.response["Error"]["Code"])
        with pytest.raises(ClientError) as e:
            ddb.list_tables()
        ddb_codes.add(e.value.response["Error"]["Code"])
    assert sqs_codes == {"RequestThrottled", "ThrottlingException"}
    assert ddb_codes == {"ProvisionedThroughputExceededException", "ThrottlingException"}

    ddb_proxy.set_faults(throttle=0.0, error500=1.0)
    with pytest.raises(ClientError) as e:
        ddb.list_tables()
    assert (e.value.response["Error"]["Code"], e.value.response["ResponseMetadata"]["HTTPStatusCode"]) == ("InternalServerError", 500)

    url = elasticmq.sqs().create_queue(QueueName="proxy-reset")["QueueUrl"]
    sqs_proxy.set_faults(throttle=0.0, reset=1.0)
    with pytest.raises((ConnectionClosedError, EndpointConnectionError)):
        sqs.send_message(QueueUrl=url, MessageBody="applied")
    depth = elasticmq.sqs().get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
    assert int(depth["Attributes"]["ApproximateNumberOfMessages"]) >= 1  # sent, though no reply came
    assert sqs_proxy.stats()["fault.reset"] >= 1


def test_a_repeated_delete_of_an_issued_handle_succeeds_as_on_aws(processes: ProcessManager, elasticmq: Emulator) -> None:
    proxy = start_aws_proxy(processes, elasticmq.endpoint_url, service="sqs")
    sqs = proxy.sqs(**NO_RETRIES)
    url = sqs.create_queue(QueueName="proxy-handles")["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="once")
    handle = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1)["Messages"][0]["ReceiptHandle"]
    sqs.delete_message(QueueUrl=url, ReceiptHandle=handle)
    with pytest.raises(ClientError):  # what ElasticMQ itself answers
        elasticmq.sqs().delete_message(QueueUrl=url, ReceiptHandle=handle)
    sqs.delete_message(QueueUrl=url, ReceiptHandle=handle)
    again = sqs.delete_message_batch(QueueUrl=url, Entries=[{"Id": "a", "ReceiptHandle": handle},
                                                            {"Id": "b", "ReceiptHandle": "never-issued"}])
    assert [e["Id"] for e in again["Successful"]] == ["a"] and [e["Id"] for e in again["Failed"]] == ["b"]
    assert proxy.stats()["handles.stale_delete_accepted"] == 2


def test_the_limit_is_read_from_a_queue_the_proxy_never_saw(processes: ProcessManager, moto: MotoServer) -> None:
    """The proxy's own GetQueueAttributes is signed: moto routes an unsigned one to S3."""
    url = moto.sqs().create_queue(QueueName="proxy-unseen", Attributes={"MaximumMessageSize": "1024"})["QueueUrl"]
    proxy = start_aws_proxy(processes, moto.endpoint_url, service="sqs")
    sqs = proxy.sqs(**NO_RETRIES)
    reason = {"failureReason": {"DataType": "String", "StringValue": "too big"}}
    sqs.send_message(QueueUrl=url, MessageBody="x" * 1024)
    with pytest.raises(ClientError) as refused:  # moto counts the body only, and would take it
        sqs.send_message(QueueUrl=url, MessageBody="x" * 1000, MessageAttributes=reason)
    assert "shorter than 1024 bytes" in refused.value.response["Error"]["Message"]
    assert proxy.stats() == {"size.send_refused": 1}
