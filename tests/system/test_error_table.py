"""Every modeled error of every operation we call, with our classification (map_http_error via
the test-only ic_error_classify), held against botocore's: its standard retry mode's throttling
and transient code lists and 5xx statuses (botocore/retries/standard.py), the `retryable` trait
of each error shape, and the legacy retry config's entries for the service (data/_retry.json).
Where we differ on purpose, the reason is in DIFFERENCES and in docs/design.md §6."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import botocore
import botocore.session
from botocore.retries.standard import ThrottledRetryableChecker, TransientRetryableChecker

OPERATIONS = {
    "sqs": ["ReceiveMessage", "DeleteMessageBatch", "ChangeMessageVisibilityBatch", "SendMessage", "SendMessageBatch",
            "GetQueueAttributes", "SetQueueAttributes", "GetQueueUrl", "CreateQueue", "PurgeQueue"],
    "dynamodb": ["UpdateItem", "GetItem", "Query", "Scan", "DescribeTable", "CreateTable", "DescribeTimeToLive",
                 "UpdateTimeToLive"],
    "sts": ["AssumeRoleWithWebIdentity"],
}
# (service, code we report) -> (our class, why it differs from botocore's)
DIFFERENCES: dict[tuple[str, str], tuple[str, str]] = {}


def legacy_codes(service: str) -> set[str]:
    data = json.loads((Path(botocore.__file__).parent / "data" / "_retry.json").read_text())
    entries = {**data["retry"]["__default__"]["policies"],
               **data["retry"].get(service, {}).get("__default__", {}).get("policies", {})}
    defs = data["definitions"]
    codes = set()
    for policy in entries.values():
        policy = defs.get(policy.get("$ref"), policy) if "$ref" in policy else policy
        code = policy.get("applies_when", {}).get("response", {}).get("service_error_code")
        if code:
            codes.add(code)
    return codes


def modeled_errors() -> list[dict]:
    session = botocore.session.get_session()
    rows = []
    for service, operations in OPERATIONS.items():
        model = session.get_service_model(service)
        raw = session.get_component("data_loader").load_service_model(service, "service-2")["shapes"]
        query_compatible = "awsQueryCompatible" in model.metadata
        for operation in operations:
            for shape in model.operation_model(operation).error_shapes:
                trait = shape.metadata.get("error", {})
                status = trait.get("httpStatusCode") or (500 if raw[shape.name].get("fault") else 400)
                code = trait.get("code", shape.name) if query_compatible or model.protocol == "query" else shape.name
                fault = "Receiver" if status >= 500 else "Sender"
                rows.append({"service": service, "operation": operation, "shape": shape.name, "status": status,
                             "code": code, "retryable_trait": raw[shape.name].get("retryable"),
                             "protocol": "xml" if model.protocol == "query" else "json",
                             "type": code if model.protocol == "query" else f"{model.metadata['targetPrefix']}#{shape.name}",
                             "query_error": f"{code};{fault}" if query_compatible else "-"})
    return rows


def botocore_class(row: dict) -> str:
    trait = row["retryable_trait"]
    if row["code"] in ThrottledRetryableChecker._THROTTLED_ERROR_CODES or row["status"] == 429 \
            or (trait and trait.get("throttling")):
        return "throttling"
    if row["code"] in TransientRetryableChecker._TRANSIENT_ERROR_CODES or row["status"] in (500, 502, 503, 504) \
            or trait is not None:
        return "retryable"
    return "permanent"


def ours(rows: list[dict]) -> list[tuple[str, str]]:
    binary = Path(os.environ.get("IC_BUILD_DIR", "build/dev")) / "tests/unit/aws/ic_error_classify"
    stdin = "".join(f"{r['protocol']} {r['status']} {r['type']} {r['query_error']}\n" for r in rows)
    out = subprocess.run([str(binary)], input=stdin, capture_output=True, text=True, check=True, timeout=30).stdout
    return [tuple(line.split()) for line in out.splitlines()]  # type: ignore[misc]


def test_every_modeled_error_is_classified_as_botocore_retries_it() -> None:
    rows = modeled_errors()
    assert len(rows) > 50
    disagreements, table = [], []
    for row, (code, our_class) in zip(rows, ours(rows), strict=True):
        theirs = botocore_class(row)
        legacy = row["code"] in legacy_codes(row["service"])
        table.append(f"{row['service']:8} {row['operation']:28} {row['shape']:44} {row['status']} {our_class:10} {theirs}")
        assert code == row["code"], f"{row}: we report {code}"
        if legacy and theirs == "permanent":
            theirs = "retryable"  # legacy mode retries it: so must we
        if our_class != theirs and DIFFERENCES.get((row["service"], code), ("",))[0] != our_class:
            disagreements.append(f"{row['service']}.{row['operation']} {code}: ours {our_class}, botocore {theirs}")
    print("\n".join(table))
    assert disagreements == [], "\n".join(disagreements)
