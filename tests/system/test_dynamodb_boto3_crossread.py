"""Our DynamoDB store's records as the official SDK sees them: a C++ helper writes DONE,
FAILED and IN_PROGRESS records through DynamoDbIdempotencyStore, then boto3 reads them back
and checks docs/design.md §3's attribute names, types and units.

The helper is built with the C++ tests:
$IC_BUILD_DIR/tests/integration/dynamodb/ic_dynamodb_record_writer.
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import pytest

from tools.local_stack.moto import MotoServer
from tools.local_stack.paths import build_dir

TABLE = "idempotency-crossread"


@pytest.fixture
def written(moto: MotoServer) -> dict[str, Any]:
    """Runs the C++ writer against the test's moto; returns the times it used."""
    writer = build_dir() / "tests" / "integration" / "dynamodb" / "ic_dynamodb_record_writer"
    assert writer.exists(), f"{writer} is missing: build the C++ tests first"
    env = {**os.environ, **moto.env()}
    result = subprocess.run(
        [str(writer), moto.endpoint_url, TABLE], capture_output=True, text=True, timeout=60, env=env
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def item(moto: MotoServer, key: str) -> dict[str, Any]:
    reply = moto.dynamodb().get_item(TableName=TABLE, Key={"pk": {"S": key}}, ConsistentRead=True)
    assert "Item" in reply, f"{key} not found"
    return reply["Item"]


def attribute_types(record: dict[str, Any]) -> dict[str, str]:
    return {name: next(iter(value)) for name, value in record.items()}


COMMON_TYPES = {
    "pk": "S",
    "state": "S",
    "leaseUntil": "N",
    "claimToken": "S",
    "fence": "N",
    "owner": "S",
    "payloadHash": "S",
    "createdAt": "N",
    "firstAttemptAt": "N",  # when the bank's idempotency window started (design §3)
    "updatedAt": "N",
    "expiresAt": "N",
}


def test_done_record_has_the_documented_attributes(moto: MotoServer, written: dict[str, Any]) -> None:
    record = item(moto, "CHG-DONE")
    assert attribute_types(record) == {**COMMON_TYPES, "status": "S", "debitRef": "S", "completedAt": "N"}
    now = written["now_ms"]
    assert record["state"]["S"] == "DONE"
    assert record["status"]["S"] == "DEBITED"
    assert record["debitRef"]["S"] == "DBT-42"
    assert record["claimToken"]["S"] == "token-done"
    assert record["owner"]["S"] == "writer/1"
    assert record["payloadHash"]["S"] == "hash-CHG-DONE"
    assert int(record["fence"]["N"]) == 1
    assert int(record["createdAt"]["N"]) == now
    assert int(record["leaseUntil"]["N"]) == now + written["lease_ms"]
    assert int(record["updatedAt"]["N"]) == int(record["completedAt"]["N"]) == now + 2000
    # TTL in epoch seconds (not ms), counted from the final write.
    assert int(record["expiresAt"]["N"]) == (now + 2000) // 1000 + written["retention_seconds"]


def test_failed_record_carries_the_reason(moto: MotoServer, written: dict[str, Any]) -> None:
    record = item(moto, "CHG-FAILED")
    assert attribute_types(record) == {
        **COMMON_TYPES,
        "status": "S",
        "failureReason": "S",
        "completedAt": "N",
        "attention": "S",  # the sparse index's key: a failure needs a person (design §3)
        "attentionAt": "N",
    }
    assert record["attention"]["S"] == "FAILED"
    assert record["attentionAt"]["N"] == record["completedAt"]["N"]
    assert record["state"]["S"] == "FAILED"
    assert record["status"]["S"] == "FAILED_PERMANENT"
    assert record["failureReason"]["S"] == "INSUFFICIENT_FUNDS"
    assert int(record["completedAt"]["N"]) == written["now_ms"] + 3000


def test_in_progress_record_has_no_final_attributes(moto: MotoServer, written: dict[str, Any]) -> None:
    record = item(moto, "CHG-INPROGRESS")
    assert attribute_types(record) == COMMON_TYPES
    assert record["state"]["S"] == "IN_PROGRESS"
    assert record["firstAttemptAt"]["N"] == record["createdAt"]["N"]  # claimed once
    assert int(record["expiresAt"]["N"]) == written["now_ms"] // 1000 + written["retention_seconds"]


def test_table_schema_and_ttl(moto: MotoServer, written: dict[str, Any]) -> None:
    client = moto.dynamodb()
    table = client.describe_table(TableName=TABLE)["Table"]
    assert table["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"}]
    assert sorted(table["AttributeDefinitions"], key=lambda d: d["AttributeName"]) == [
        {"AttributeName": "attention", "AttributeType": "S"},
        {"AttributeName": "attentionAt", "AttributeType": "N"},
        {"AttributeName": "pk", "AttributeType": "S"},
    ]
    (index,) = table["GlobalSecondaryIndexes"]
    assert index["IndexName"] == "attention-index"
    assert index["KeySchema"] == [
        {"AttributeName": "attention", "KeyType": "HASH"},
        {"AttributeName": "attentionAt", "KeyType": "RANGE"},
    ]
    assert index["Projection"] == {"ProjectionType": "ALL"}
    assert table["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    ttl = client.describe_time_to_live(TableName=TABLE)["TimeToLiveDescription"]
    assert ttl["AttributeName"] == "expiresAt"
    assert ttl["TimeToLiveStatus"] in ("ENABLED", "ENABLING")
