"""Checks recorded requests (tools/local_stack/aws_proxy.py --record) against AWS's own service
models, botocore being the oracle: its ParamValidator on the parsed input of the operation the
request names (X-Amz-Target, or Action for the query protocol), plus what ParamValidator leaves
out (enum members, maximum lengths, patterns, numeric maxima, DynamoDB expressions whose every
#name and :value is defined and used, batch limits), and the SigV4 signature re-computed with
botocore's SigV4Auth from the test credentials and the request's own X-Amz-Date.

    problems = check_record(Path("requests.jsonl"))    # [] when every request conforms
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import botocore.auth
import botocore.session
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.validate import ParamValidator

TARGET_PREFIXES = {"AmazonSQS": "sqs", "DynamoDB_20120810": "dynamodb"}
EXPRESSIONS = ("KeyConditionExpression", "FilterExpression", "ProjectionExpression", "UpdateExpression",
               "ConditionExpression")
BATCH_LIMITS = {"SendMessageBatch": 10, "DeleteMessageBatch": 10, "ChangeMessageVisibilityBatch": 10}

_session = botocore.session.get_session()


def operation_of(record: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """(service, operation, parsed input) of one recorded request."""
    headers = {k.lower(): v for k, v in record["headers"]}
    target = headers.get("x-amz-target")
    body = record.get("body", "")
    if target:
        prefix, _, operation = target.partition(".")
        return TARGET_PREFIXES.get(prefix, prefix), operation, json.loads(body or "{}")
    form = dict(urllib.parse.parse_qsl(body))
    service = headers.get("authorization", "").split("/")[3] if "/" in headers.get("authorization", "") else "sts"
    operation = form.pop("Action", "")
    form.pop("Version", None)
    return service, operation, form


def _walk(shape: Any, value: Any, path: str) -> Iterator[str]:
    """What ParamValidator skips, over the whole input."""
    meta = shape.metadata
    kind = shape.type_name
    if kind == "structure" and isinstance(value, dict):
        for name, member in shape.members.items():
            if name in value:
                yield from _walk(member, value[name], f"{path}.{name}")
    elif kind == "list" and isinstance(value, list):
        yield from _bounds(meta, len(value), path, "length")
        for i, item in enumerate(value):
            yield from _walk(shape.member, item, f"{path}[{i}]")
    elif kind == "map" and isinstance(value, dict):
        yield from _bounds(meta, len(value), path, "length")
        for k, v in value.items():
            yield from _walk(shape.key, k, f"{path}.<key {k}>")
            yield from _walk(shape.value, v, f"{path}.{k}")
    elif kind == "string" and isinstance(value, str):
        if shape.enum and value not in shape.enum:
            yield f"{path}: {value!r} is not one of {shape.name}'s enum"
        yield from _bounds(meta, len(value), path, "length")
        pattern = meta.get("pattern")
        if pattern and re.search(pattern, value) is None:
            yield f"{path}: {value!r} does not match {pattern!r}"
    elif kind in ("integer", "long") and isinstance(value, int):
        yield from _bounds(meta, value, path, "value")


def _bounds(meta: dict[str, Any], n: int, path: str, what: str) -> Iterator[str]:
    if "min" in meta and n < meta["min"]:
        yield f"{path}: {what} {n} below the minimum {meta['min']}"
    if "max" in meta and n > meta["max"]:
        yield f"{path}: {what} {n} above the maximum {meta['max']}"


def _expressions(params: dict[str, Any], path: str) -> Iterator[str]:
    text = " ".join(str(params[e]) for e in EXPRESSIONS if e in params)
    names, values = params.get("ExpressionAttributeNames") or {}, params.get("ExpressionAttributeValues") or {}
    used_names = set(re.findall(r"#[A-Za-z0-9_]+", text))
    used_values = set(re.findall(r":[A-Za-z0-9_]+", text))
    for missing in sorted(used_names - set(names)) + sorted(used_values - set(values)):
        yield f"{path}: {missing} is used and not defined"
    for unused in sorted(set(names) - used_names) + sorted(set(values) - used_values):
        yield f"{path}: {unused} is defined and not used"


def semantic_problems(service: str, operation: str, params: dict[str, Any]) -> list[str]:
    model = _session.get_service_model(service).operation_model(operation)
    report = ParamValidator().validate(params, model.input_shape)
    problems = [report.generate_report()] if report.has_errors() else []
    problems += list(_walk(model.input_shape, params, operation))
    if service == "dynamodb":
        problems += list(_expressions(params, operation))
        for table, spec in (params.get("RequestItems") or {}).items():
            if isinstance(spec, dict):
                problems += list(_expressions(spec, f"{operation}.RequestItems.{table}"))
        items = params.get("RequestItems") or {}
        if operation == "BatchGetItem" and sum(len(s.get("Keys", [])) for s in items.values()) > 100:
            problems.append("BatchGetItem: more than 100 keys")
        if operation == "BatchWriteItem" and sum(len(s) for s in items.values()) > 25:
            problems.append("BatchWriteItem: more than 25 requests")
    limit = BATCH_LIMITS.get(operation)
    if limit is not None and not 1 <= len(params.get("Entries") or []) <= limit:
        problems.append(f"{operation}: {len(params.get('Entries') or [])} entries, not 1 to {limit}")
    return problems


def signature_problem(record: dict[str, Any], access_key: str, secret_key: str) -> str | None:
    """Re-sign the request over the headers it says it signed, at its own X-Amz-Date."""
    headers = {k.lower(): v for k, v in record["headers"]}
    authorization = headers.get("authorization", "")
    match = re.match(r"AWS4-HMAC-SHA256 Credential=[^/]+/(\d{8})/([^/]+)/([^/]+)/aws4_request, "
                     r"SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$", authorization)
    if match is None:
        return f"unparsable Authorization header {authorization!r}"
    _, region, service, signed, _ = match.groups()
    signed_names = signed.split(";")
    request = AWSRequest(method=record["method"], url=f"http://{headers['host']}{record['path']}",
                         data=record.get("body", "").encode(),
                         headers={k: headers[k] for k in signed_names if k != "x-amz-date" and k in headers})
    stamp = botocore.auth.datetime.datetime.strptime(headers["x-amz-date"], botocore.auth.SIGV4_TIMESTAMP)
    token = headers.get("x-amz-security-token")
    signer = botocore.auth.SigV4Auth(Credentials(access_key, secret_key, token), service, region)
    with mock.patch.object(botocore.auth, "get_current_datetime", return_value=stamp):
        signer.add_auth(request)
    if request.headers["Authorization"] != authorization:
        return f"signature differs: sent {authorization!r}, botocore {request.headers['Authorization']!r}"
    return None


def issued_credentials(records: list[dict[str, Any]]) -> dict[str, str]:
    """Access key -> secret of every set of credentials an STS reply in the recording issued."""
    out = {}
    for record in records:
        reply = record.get("response") or ""
        key = re.search(r"<AccessKeyId>([^<]+)</AccessKeyId>", reply)
        secret = re.search(r"<SecretAccessKey>([^<]+)</SecretAccessKey>", reply)
        if key and secret:
            out[key.group(1)] = secret.group(1)
    return out


def check_record(path: Path, access_key: str = "testing", secret_key: str = "testing",
                 skip_user_agent: str = "Boto3/") -> tuple[int, list[str]]:
    """(requests checked, problems) over every request of the recording not sent by boto3
    (the tests' own clients). Requests signed with credentials an STS reply of the recording
    issued are re-signed with those; an operation modeled as unsigned must carry no signature."""
    checked, problems = 0, []
    records = [json.loads(line) for line in path.read_text().splitlines()]
    secrets = {access_key: secret_key, **issued_credentials(records)}
    for record in records:
        headers = {k.lower(): v for k, v in record["headers"]}
        if skip_user_agent in headers.get("user-agent", ""):
            continue
        checked += 1
        service, operation, params = operation_of(record)
        where = f"{service}.{operation} ({headers.get('user-agent', '?')})"
        try:
            problems += [f"{where}: {p}" for p in semantic_problems(service, operation, params)]
        except Exception as e:  # an unknown operation is a finding, not a crash
            problems.append(f"{where}: {type(e).__name__}: {e}")
        authorization = headers.get("authorization", "")
        try:
            unsigned = _session.get_service_model(service).operation_model(operation).auth_type == "none"
        except Exception:
            unsigned = False
        if unsigned:
            if authorization:
                problems.append(f"{where}: signed, though the operation is modeled unsigned")
            continue
        key = authorization.partition("Credential=")[2].partition("/")[0]
        if (problem := signature_problem(record, key, secrets.get(key, ""))) is not None:
            problems.append(f"{where}: {problem}")
    return checked, problems
