"""Wire conformance: every request a short consumer run and the operator subcommands send,
recorded by the AWS proxy in front of moto, checked against botocore's models and re-signed
with botocore (tools/wire/conformance.py)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from botocore.exceptions import ClientError

from tools.local_stack import FakeBank, MotoServer, ProcessManager, provision_stack, run_cli
from tools.local_stack.aws_proxy import start_aws_proxy
from tools.local_stack.charge_recovery import Consumers
from tools.wire.conformance import check_record, operation_of

pytestmark = pytest.mark.timeout(120)


def test_every_request_of_a_run_and_the_operator_commands_conforms(
        processes: ProcessManager, moto: MotoServer, fake_bank: FakeBank, tmp_path: Path) -> None:
    record = tmp_path / "requests.jsonl"
    proxy = start_aws_proxy(processes, moto.endpoint_url, service="sqs", record=record)
    stack = provision_stack(proxy, lease_seconds=3)  # provision itself goes through the proxy
    consumers = Consumers(processes, stack, fake_bank)
    consumer = consumers.start()
    sent = stack.cli("send", "--count", "12", "--duplicate-rate", "0.5", "--seed", "7", "--id-prefix", "CHG-WIRE-")
    assert sent.returncode == 0, sent.stderr
    stack.send_body('{"schemaVersion":1,"chargeId":"CHG-WIRE-BAD","amountMinor":"x"}')  # dead-lettered
    stack.wait_drained(timeout=30)
    stack.dead_letters(1)
    env = {**stack.env(), **fake_bank.env()}
    for args in (["status", "CHG-WIRE-1"], ["list", "--status", "FAILED", "--since", "1d"],
                 ["list", "--status", "DEBITED_NOTIFICATION_FAILED"],
                 ["list", "--status", "IN_PROGRESS", "--older-than-leases", "2"],
                 ["redrive", "--dry-run"], ["redrive", "--reason", "INVALID_MESSAGE"],
                 ["renotify", "CHG-WIRE-NEVER"], ["reopen", "CHG-WIRE-NEVER", "--reason", "wire check"]):
        result = run_cli(args, env)
        assert result.returncode in (0, 3, 4), f"{args}: {result.returncode} {result.stderr}"
    consumers.kill(consumer)  # SIGTERM would wait out a 20 s long poll
    token = tmp_path / "token"
    token.write_text("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQifQ.c2ln\n")
    keyless = {**env, "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_WEB_IDENTITY_TOKEN_FILE": str(token),
               "AWS_ROLE_ARN": "arn:aws:iam::123456789012:role/charge-recovery", "AWS_ROLE_SESSION_NAME": "wire",
               "HOME": str(tmp_path), "AWS_PROFILE": "", "AWS_CONFIG_FILE": "", "AWS_SHARED_CREDENTIALS_FILE": ""}
    assert run_cli(["status", "CHG-WIRE-NEVER"], keyless).returncode == 3  # via STS, then a signed GetItem

    checked, problems = check_record(record)
    operations = Counter(operation_of(json.loads(line))[1] for line in record.read_text().splitlines()
                         if "Boto3/" not in dict(json.loads(line)["headers"]).get("User-Agent", ""))
    print(f"{checked} requests checked: {dict(operations)}")
    assert {"ReceiveMessage", "DeleteMessageBatch", "UpdateItem", "SendMessage", "Query",
            "AssumeRoleWithWebIdentity"} <= set(operations)
    assert problems == [], "\n".join(problems)


def test_the_checker_finds_an_enum_miss_an_unused_value_and_a_tampered_signature(
        processes: ProcessManager, moto: MotoServer, tmp_path: Path) -> None:
    record = tmp_path / "requests.jsonl"
    proxy = start_aws_proxy(processes, moto.endpoint_url, service="sqs", record=record)
    url = proxy.sqs().create_queue(QueueName="wire-negative")["QueueUrl"]
    proxy.sqs().receive_message(QueueUrl=url, AttributeNames=["ApproximateReceiveCount"], WaitTimeSeconds=0)
    proxy.dynamodb().create_table(TableName="wire-negative", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                                  AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                                  BillingMode="PAY_PER_REQUEST")
    with pytest.raises(ClientError):  # moto refuses it too, once it reached moto
        proxy.dynamodb().get_item(TableName="wire-negative", Key={"pk": {"S": "a"}}, ProjectionExpression="#p",
                                  ExpressionAttributeNames={"#p": "pk", "#q": "unused"})
    lines = record.read_text().splitlines()
    tampered = json.loads(lines[0])
    tampered["body"] = tampered["body"].replace("wire-negative", "wire-negativE")
    record.write_text("\n".join([*lines, json.dumps(tampered)]) + "\n")

    checked, problems = check_record(record, skip_user_agent="\0")  # boto3's own requests are the subject here
    assert checked == len(lines) + 1
    assert any("ReceiveMessage" in p and "'ApproximateReceiveCount' is not one of" in p for p in problems), problems
    assert any("GetItem" in p and "#q is defined and not used" in p for p in problems), problems
    assert sum("signature differs" in p for p in problems) == 1, problems
