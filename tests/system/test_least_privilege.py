"""Scenario 9, least privilege: `charge-recovery run` works with exactly deploy/iam-policy.json,
and every action in that policy is needed.

The module runs its own moto server with IAM enforcement on. What moto 5.2.1 does
(moto/core/authorization.py, moto/iam/access_control.py), found by reading it and by probing:
- INITIAL_NO_AUTH_ACTION_COUNT=n: one counter per server process, over every service (IAM
  included; /moto-api/ calls are not counted). The first n requests skip authentication;
  every later one must be SigV4-signed with an IAM user's access key (moto recomputes the
  signature with botocore; an unknown key gets InvalidClientTokenId) and be allowed by the
  user's inline, attached or group policies. An explicit Deny wins; Condition blocks are only
  evaluated in role trust policies.
- A denial is HTTP 403 with an XML body, even for the JSON protocols: code AccessDenied,
  message "User: <user arn> is not authorized to perform: <service>:<Action>".
- Resources: an SQS request is checked against its queue's ARN, taken from QueueUrl; a request
  naming the queue by QueueName (CreateQueue, GetQueueUrl) is checked against "*". A DynamoDB
  request is always checked against "*" (DynamoHandler has no _determine_resource), so a
  statement scoped to a table ARN never matches and every DynamoDB call is denied.
- Actions are the API operation names, so DeleteMessageBatch is checked as
  sqs:DeleteMessageBatch, where AWS authorises it as sqs:DeleteMessage (likewise
  ChangeMessageVisibilityBatch and SendMessageBatch).
The moto this module starts runs with the launcher's --enforce-iam-gaps (tools/moto_server.py),
which closes these gaps, so that the policy under test is deploy/iam-policy.json verbatim with
only its placeholders filled in, and table scoping is enforced as well as queue scoping.

Set-up spends the unauthenticated budget (3 requests) on an admin user; the admin creates an
operator user with deploy/iam-policy-operator.json, which runs `charge-recovery provision`;
each test creates a consumer user with the policy (or the policy minus one action) attached.
"""

from __future__ import annotations

import copy
import json
import re
import string
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from charges import charge, charge_body
from tools.local_stack.charge_recovery import (
    ChargeStack,
    Consumer,
    Consumers,
    attribute,
    parse_assignments,
    provision_args,
    run_cli,
)
from tools.local_stack.fake_bank import FakeBank
from tools.local_stack.moto import MotoServer, start_moto
from tools.local_stack.paths import REPO_ROOT
from tools.local_stack.processes import ProcessManager

POLICY = REPO_ROOT / "deploy" / "iam-policy.json"
OPERATOR_POLICY = REPO_ROOT / "deploy" / "iam-policy-operator.json"
STALE_CLAIMS_POLICY = REPO_ROOT / "deploy" / "iam-policy-stale-claims.json"
RUN_ACTIONS = [
    "sqs:ReceiveMessage",
    "sqs:DeleteMessage",
    "sqs:ChangeMessageVisibility",
    "sqs:SendMessage",
    "sqs:GetQueueAttributes",
    "dynamodb:UpdateItem",
    "dynamodb:GetItem",
]
LEASE_SECONDS = 2
NO_AUTH_BUDGET = 3  # create_user, put_user_policy, create_access_key of the admin
NSF_ACCOUNT = "ACC-NSF-00000001"
PERMANENT_FAILURES = {"ACC-NSF": "INSUFFICIENT_FUNDS"}


# --- the moto server of this module -------------------------------------------------------


def start_iam_moto(manager: ProcessManager) -> MotoServer:
    """tools/moto_server.py --enforce-iam-gaps, authentication on after NO_AUTH_BUDGET requests."""
    env = {"INITIAL_NO_AUTH_ACTION_COUNT": str(NO_AUTH_BUDGET)}
    return start_moto(manager, enforce_iam_gaps=True, env=env, name="moto-iam")


# --- policies and users -------------------------------------------------------------------


def render(path: Path, names: dict[str, str]) -> dict[str, Any]:
    """The policy template with its ${...} placeholders filled (as envsubst would)."""
    return json.loads(string.Template(path.read_text()).substitute(names))


def actions_of(policy: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for statement in policy["Statement"]:
        action = statement["Action"]
        out.extend([action] if isinstance(action, str) else action)
    return out


def without(policy: dict[str, Any], action: str) -> dict[str, Any]:
    """The policy minus one action (statements left empty are dropped)."""
    assert action in actions_of(policy), action
    reduced = copy.deepcopy(policy)
    statements = []
    for statement in reduced["Statement"]:
        actions = [statement["Action"]] if isinstance(statement["Action"], str) else statement["Action"]
        kept = [a for a in actions if a != action]
        if kept:
            statement["Action"] = kept
            statements.append(statement)
    reduced["Statement"] = statements
    return reduced


@dataclass
class Keys:
    access_key_id: str
    secret_access_key: str

    def env(self) -> dict[str, str]:
        return {"AWS_ACCESS_KEY_ID": self.access_key_id, "AWS_SECRET_ACCESS_KEY": self.secret_access_key}


def client(moto: MotoServer, service: str, keys: Keys) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.session.Session().client(
        service,
        endpoint_url=moto.endpoint_url,
        region_name=moto.region,
        aws_access_key_id=keys.access_key_id,
        aws_secret_access_key=keys.secret_access_key,
        config=Config(retries={"max_attempts": 1}, connect_timeout=2, read_timeout=30),
    )


def create_user(iam: Any, name: str, policy: dict[str, Any]) -> Keys:
    """An IAM user with `policy` attached as a managed policy, and an access key."""
    arn = iam.create_policy(PolicyName=name, PolicyDocument=json.dumps(policy))["Policy"]["Arn"]
    iam.create_user(UserName=name)
    iam.attach_user_policy(UserName=name, PolicyArn=arn)
    key = iam.create_access_key(UserName=name)["AccessKey"]
    return Keys(key["AccessKeyId"], key["SecretAccessKey"])


@dataclass
class World:
    moto: MotoServer
    stack: ChargeStack  # its boto3 clients use the admin's keys
    names: dict[str, str]
    iam: Any  # the admin's
    operator: Keys  # deploy/iam-policy-operator.json, as rendered

    def policy(self) -> dict[str, Any]:
        return render(POLICY, self.names)

    def operator_policy(self) -> dict[str, Any]:
        return render(OPERATOR_POLICY, self.names)

    def consumer_keys(self, policy: dict[str, Any]) -> Keys:
        return create_user(self.iam, f"consumer-{uuid.uuid4().hex[:8]}", policy)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    manager = ProcessManager(tmp_path_factory.mktemp("least-privilege"))
    try:
        moto = start_iam_moto(manager)
        unauthenticated = client(moto, "iam", Keys("testing", "testing"))
        unauthenticated.create_user(UserName="admin")
        admin_policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
        unauthenticated.put_user_policy(UserName="admin", PolicyName="admin", PolicyDocument=json.dumps(admin_policy))
        key = unauthenticated.create_access_key(UserName="admin")["AccessKey"]
        admin = Keys(key["AccessKeyId"], key["SecretAccessKey"])

        suffix = uuid.uuid4().hex[:8]
        account = client(moto, "sts", admin).get_caller_identity()["Account"]
        names = {
            "AWS_REGION": moto.region,
            "AWS_ACCOUNT_ID": account,
            "IDEMPOTENCY_TABLE": f"charges-{suffix}",
            "CHARGE_QUEUE_NAME": f"charge-due-{suffix}",
            "CHARGE_DLQ_NAME": f"charge-due-dlq-{suffix}",
        }
        iam = client(moto, "iam", admin)
        operator = create_user(iam, "operator", render(OPERATOR_POLICY, names))
        env = {**moto.env(), **operator.env(), "LEASE_SECONDS": str(LEASE_SECONDS)}
        args = provision_args(names["IDEMPOTENCY_TABLE"], names["CHARGE_QUEUE_NAME"], names["CHARGE_DLQ_NAME"], 10)
        provisioned = run_cli(args, env)
        assert provisioned.returncode == 0, f"provision with the operator policy failed: {provisioned.stderr}"
        printed = parse_assignments(provisioned.stdout)
        stack = ChargeStack(
            moto=moto,
            table=names["IDEMPOTENCY_TABLE"],
            queue_url=printed["CHARGE_QUEUE_URL"],
            dlq_url=printed["CHARGE_DLQ_URL"],
            lease_seconds=LEASE_SECONDS,
            max_receive_count=10,
            sqs=client(moto, "sqs", admin),
            dynamodb=client(moto, "dynamodb", admin),
        )
        yield World(moto, stack, names, iam, operator)
    finally:
        manager.stop_all()


@pytest.fixture
def consumers(world: World, fake_bank: FakeBank, processes: ProcessManager) -> Iterator[Consumers]:
    """Consumers on the module's stack; both queues emptied first (earlier tests leave
    messages behind on purpose)."""
    for url in (world.stack.queue_url, world.stack.dlq_url):
        world.stack.sqs.purge_queue(QueueUrl=url)
    assert world.stack.depth() == 0 and world.stack.depth(world.stack.dlq_url) == 0
    fake_bank.set_faults(permanentFailures=PERMANENT_FAILURES)
    started = Consumers(processes, world.stack, fake_bank)
    try:
        yield started
    finally:
        started.stop_all()


# --- helpers ------------------------------------------------------------------------------


def new_id(label: str) -> str:
    return f"CHG-LP-{label}-{uuid.uuid4().hex[:10]}"


def debits_of(bank: FakeBank, charge_id: str) -> list[dict[str, Any]]:
    return [d for d in bank.ledger()["debits"] if d["chargeId"] == charge_id]


def claims_of(consumer: Consumer, charge_id: str) -> list[str]:
    """The claim's answer to each delivery of the charge that ended (its `charge handled` line)."""
    return [line["claim"] for line in consumer.logged("charge handled", chargeId=charge_id)]


class ActionNotNamedInLogs(AssertionError):
    """The consumer was denied, but its log does not say which action was missing."""


def denial(consumer: Consumer, msg: str, timeout: float = 15.0, **fields: Any) -> dict[str, Any]:
    """Wait for a log line `msg` (with `fields`) whose code is AccessDenied."""
    return consumer.process.wait_for(
        lambda: next(iter(consumer.logged(msg, code="AccessDenied", **fields)), None),
        timeout,
        f'log "{msg}" with code AccessDenied',
    )


def assert_names_action(line: dict[str, Any], action: str) -> None:
    if action not in json.dumps(line):
        raise ActionNotNamedInLogs(f"{action} is not named in the denial logged: {line}")


# --- the policy itself --------------------------------------------------------------------


def test_policy_grants_exactly_the_actions_run_calls_on_named_resources(world: World) -> None:
    policy = world.policy()
    assert sorted(actions_of(policy)) == sorted(RUN_ACTIONS)
    queue_arn = "arn:aws:sqs:{AWS_REGION}:{AWS_ACCOUNT_ID}:{CHARGE_QUEUE_NAME}".format(**world.names)
    dlq_arn = "arn:aws:sqs:{AWS_REGION}:{AWS_ACCOUNT_ID}:{CHARGE_DLQ_NAME}".format(**world.names)
    table_arn = "arn:aws:dynamodb:{AWS_REGION}:{AWS_ACCOUNT_ID}:table/{IDEMPOTENCY_TABLE}".format(**world.names)
    resources = {}
    for statement in policy["Statement"]:
        assert statement["Effect"] == "Allow" and "Condition" not in statement, statement
        for action in actions_of({"Statement": [statement]}):
            resources[action] = statement["Resource"]
    assert resources == {
        "sqs:ReceiveMessage": queue_arn,
        "sqs:DeleteMessage": queue_arn,
        "sqs:ChangeMessageVisibility": queue_arn,
        "sqs:SendMessage": dlq_arn,
        "sqs:GetQueueAttributes": [queue_arn, dlq_arn],
        "dynamodb:UpdateItem": table_arn,
        "dynamodb:GetItem": table_arn,
    }
    # The ARNs in the policy are the ones the emulator (and AWS) compute for these resources.
    attributes = world.stack.sqs.get_queue_attributes(QueueUrl=world.stack.queue_url, AttributeNames=["QueueArn"])
    assert attributes["Attributes"]["QueueArn"] == queue_arn
    described = world.stack.dynamodb.describe_table(TableName=world.names["IDEMPOTENCY_TABLE"])
    assert described["Table"]["TableArn"] == table_arn


def test_the_emulator_enforces_the_policy_and_its_resource_scoping(world: World) -> None:
    from botocore.exceptions import ClientError

    keys = world.consumer_keys(world.policy())
    sqs, dynamodb = client(world.moto, "sqs", keys), client(world.moto, "dynamodb", keys)

    def code_of(call: Callable[[], Any]) -> str:
        with pytest.raises(ClientError) as caught:
            call()
        # moto answers auth failures with XML even to JSON-protocol clients; botocore then
        # reports the HTTP status as the code and the document as the message.
        xml_code = re.search(r"<Code>([^<]+)</Code>", str(caught.value))
        return xml_code.group(1) if xml_code else str(caught.value.response["Error"]["Code"])

    anonymous = client(world.moto, "sqs", Keys("testing", "testing"))
    assert code_of(anonymous.list_queues) == "InvalidClientTokenId"
    # Allowed action, resource in scope: passes authorisation (then fails on the fake handle).
    assert code_of(lambda: sqs.delete_message(QueueUrl=world.stack.queue_url, ReceiptHandle="x")) != "AccessDenied"
    # SendMessage is granted on the DLQ only, and the batch form is authorised as SendMessage.
    sqs.send_message(QueueUrl=world.stack.dlq_url, MessageBody="probe")
    assert code_of(lambda: sqs.send_message(QueueUrl=world.stack.queue_url, MessageBody="x")) == "AccessDenied"
    batch = [{"Id": "0", "MessageBody": "x"}]
    assert code_of(lambda: sqs.send_message_batch(QueueUrl=world.stack.queue_url, Entries=batch)) == "AccessDenied"
    # Nothing outside the policy: no queue or table management, no reads beyond GetItem.
    assert code_of(lambda: sqs.create_queue(QueueName="not-allowed")) == "AccessDenied"
    assert code_of(lambda: sqs.purge_queue(QueueUrl=world.stack.dlq_url)) == "AccessDenied"
    assert code_of(lambda: dynamodb.scan(TableName=world.names["IDEMPOTENCY_TABLE"])) == "AccessDenied"
    assert code_of(lambda: dynamodb.delete_table(TableName=world.names["IDEMPOTENCY_TABLE"])) == "AccessDenied"
    dynamodb.get_item(TableName=world.names["IDEMPOTENCY_TABLE"], Key={"pk": {"S": "probe"}})
    assert code_of(lambda: dynamodb.get_item(TableName="another-table", Key={"pk": {"S": "probe"}})) == "AccessDenied"


# --- scenarios 1-5 with the policy ----------------------------------------------------------


def test_consumer_with_the_policy_passes_scenarios_1_to_5(
    world: World, consumers: Consumers, fake_bank: FakeBank
) -> None:
    stack = world.stack
    consumer = consumers.start(**world.consumer_keys(world.policy()).env())
    once, mismatched, nsf = new_id("once"), new_id("mismatch"), new_id("nsf")
    original = charge(mismatched, amount=2500)

    # 1: five copies; 2: an invalid body; 3 (first half): the original of a later mismatch;
    # 4: a permanent failure.
    nsf_body = charge_body(charge(nsf, account=NSF_ACCOUNT))
    stack.send_bodies([charge_body(charge(once))] * 5 + ["not json", charge_body(original), nsf_body])
    assert stack.final_record(once)["status"] == "DEBITED"
    assert stack.final_record(mismatched)["status"] == "DEBITED"
    failed = stack.final_record(nsf)
    assert (failed["state"], failed["failureReason"]) == ("FAILED", "INSUFFICIENT_FUNDS")
    stack.send_body(charge_body({**original, "amountMinor": 9999}))  # 3: same chargeId, other payload
    reasons = {(attribute(m, "chargeId"), attribute(m, "failureReason")) for m in stack.dead_letters(3)}
    assert reasons == {(None, "INVALID_MESSAGE"), (mismatched, "PAYLOAD_MISMATCH"), (nsf, "PERMANENT_DEBIT_FAILURE")}

    # 5: the notification fails after the debit.
    fake_bank.set_faults(permanentFailures=PERMANENT_FAILURES, notificationFailureRate=1.0)
    unnotified = new_id("unnotified")
    stack.send_body(charge_body(charge(unnotified)))
    assert stack.final_record(unnotified)["status"] == "DEBITED_NOTIFICATION_FAILED"

    # A debit slower than half the lease: the heartbeat (UpdateItem + ChangeMessageVisibility)
    # keeps the message invisible, so it is delivered once.
    fake_bank.set_faults(latencyMs=LEASE_SECONDS * 1000)
    slow = new_id("slow")
    stack.send_body(charge_body(charge(slow)))
    assert stack.final_record(slow)["status"] == "DEBITED"
    # The line follows the final write: the logger's writer may not have written it yet.
    consumer.process.wait_for(lambda: claims_of(consumer, slow), 10.0, "its charge handled line")
    assert claims_of(consumer, slow) == ["ACQUIRED"]

    stack.wait_drained()
    assert [len(debits_of(fake_bank, c)) for c in (once, mismatched, nsf, unnotified, slow)] == [1, 1, 0, 1, 1]
    assert debits_of(fake_bank, mismatched)[0]["amountMinor"] == 2500
    assert consumer.get("/health/ready")[0] == 200
    assert not [line for line in consumer.logs() if "AccessDenied" in json.dumps(line)]
    assert consumers.stop(consumer) == 0


# --- each action is needed ----------------------------------------------------------------


def without_receive(world: World, consumer: Consumer, bank: FakeBank) -> dict[str, Any]:
    """Scenario 1 never starts: nothing is received, nothing debited."""
    charge_id = new_id("no-receive")
    world.stack.send_bodies([charge_body(charge(charge_id))] * 5)
    line = denial(consumer, "receive failed; backing off")
    assert world.stack.depth() == 5 and world.stack.record(charge_id) is None
    assert debits_of(bank, charge_id) == []
    return line


def without_delete(world: World, consumer: Consumer, bank: FakeBank) -> dict[str, Any]:
    """Scenario 1 debits once and records DONE, but the acks fail: the copies stay queued."""
    charge_id = new_id("no-delete")
    world.stack.send_bodies([charge_body(charge(charge_id))] * 5)
    assert world.stack.final_record(charge_id)["status"] == "DEBITED"
    line = denial(consumer, "batch entry failed", action="delete", final=True)
    assert world.stack.depth() > 0
    assert len(debits_of(bank, charge_id)) == 1
    return line


def without_change_visibility(world: World, consumer: Consumer, bank: FakeBank) -> dict[str, Any]:
    """A debit slower than half the lease: the heartbeat cannot extend the visibility, so the
    message is delivered again while its first delivery is still being handled."""
    bank.set_faults(permanentFailures=PERMANENT_FAILURES, latencyMs=LEASE_SECONDS * 1000)
    charge_id = new_id("no-visibility")
    world.stack.send_body(charge_body(charge(charge_id)))
    line = denial(consumer, "heartbeat could not extend visibility")
    # The second delivery came while the first was still being handled in this process, so it
    # waited for that holder (asking the store nothing) and was settled by its final write.
    consumer.process.wait_for(lambda: [line for line in consumer.logged("charge handled", chargeId=charge_id)
                                       if line["outcome"] == "ack" and line["waitedMs"] > 0],
                              15.0, "a second delivery")
    return line


def without_send(world: World, consumer: Consumer, bank: FakeBank) -> dict[str, Any]:
    """Scenario 2: the invalid message cannot be forwarded; the DLQ stays empty."""
    world.stack.send_body("not json")
    line = denial(consumer, "DLQ forward failed; message kept for retry")
    assert world.stack.depth(world.stack.dlq_url) == 0 and world.stack.depth() == 1
    return line


def without_update(world: World, consumer: Consumer, bank: FakeBank) -> dict[str, Any]:
    """Scenario 1: no claim, so no debit and no record."""
    charge_id = new_id("no-update")
    world.stack.send_bodies([charge_body(charge(charge_id))] * 5)
    line = denial(consumer, "idempotency store failed", chargeId=charge_id)
    assert world.stack.record(charge_id) is None and debits_of(bank, charge_id) == []
    return line


def not_ready_on(consumer: Consumer, dependency: str) -> dict[str, Any]:
    """The readiness probe of `dependency` is refused, so the consumer never reports ready."""
    line = denial(consumer, "dependency down", dependency=dependency)
    status, body = consumer.get("/health/ready")
    assert status != 200 and json.loads(body)["checks"][dependency]["code"] == "AccessDenied", (status, body)
    return line


def without_get_queue_attributes(world: World, consumer: Consumer, bank: FakeBank) -> dict[str, Any]:
    """Readiness: both queue probes are refused (the depth gauges too)."""
    not_ready_on(consumer, "dlq")
    return not_ready_on(consumer, "queue")


def without_get(world: World, consumer: Consumer, bank: FakeBank) -> dict[str, Any]:
    """Readiness: the table probe is refused. (Claims themselves get the refusing item from
    ALL_OLD on moto and AWS; GetItem is their fallback for stores that ignore ALL_OLD.)"""
    return not_ready_on(consumer, "table")


ABLATIONS: dict[str, Callable[[World, Consumer, FakeBank], dict[str, Any]]] = {
    "sqs:ReceiveMessage": without_receive,
    "sqs:DeleteMessage": without_delete,
    "sqs:ChangeMessageVisibility": without_change_visibility,
    "sqs:SendMessage": without_send,
    "sqs:GetQueueAttributes": without_get_queue_attributes,
    "dynamodb:UpdateItem": without_update,
    "dynamodb:GetItem": without_get,
}
@pytest.mark.parametrize("action", RUN_ACTIONS)
def test_each_action_is_needed(action: str, world: World, consumers: Consumers, fake_bank: FakeBank) -> None:
    assert set(ABLATIONS) == set(RUN_ACTIONS)
    consumer = consumers.start(**world.consumer_keys(without(world.policy(), action)).env())
    line = ABLATIONS[action](world, consumer, fake_bank)
    assert_names_action(line, action)


# --- the operator's commands with deploy/iam-policy-operator.json ----------------------------

OPERATOR_ACTIONS = [
    "dynamodb:CreateTable",
    "dynamodb:DescribeTable",
    "dynamodb:DescribeTimeToLive",
    "dynamodb:UpdateTimeToLive",
    "dynamodb:GetItem",
    "dynamodb:UpdateItem",
    "dynamodb:Query",
    "dynamodb:Scan",
    "sqs:CreateQueue",
    "sqs:GetQueueUrl",
    "sqs:GetQueueAttributes",
    "sqs:SetQueueAttributes",
    "sqs:SendMessage",
    "sqs:ReceiveMessage",
    "sqs:DeleteMessage",
    "sqs:ChangeMessageVisibility",
]


def operator_cli(world: World, keys: Keys, bank: FakeBank, *args: str) -> Any:
    env = {**world.stack.env(), **keys.env(), **bank.env()}
    return run_cli(list(args), env)


def failed_and_unnotified(world: World, consumers: Consumers, bank: FakeBank) -> tuple[str, str]:
    """With the consumer's policy: a FAILED charge (its copy in the DLQ) and a
    DEBITED_NOTIFICATION_FAILED one."""
    consumers.start(**world.consumer_keys(world.policy()).env())
    nsf, unnotified = new_id("op-nsf"), new_id("op-unnotified")
    world.stack.send_body(charge_body(charge(nsf, account=NSF_ACCOUNT)))
    assert world.stack.final_record(nsf)["state"] == "FAILED"
    bank.set_faults(permanentFailures=PERMANENT_FAILURES, notificationFailureRate=1.0)
    world.stack.send_body(charge_body(charge(unnotified)))
    assert world.stack.final_record(unnotified)["status"] == "DEBITED_NOTIFICATION_FAILED"
    bank.set_faults(permanentFailures=PERMANENT_FAILURES)
    world.stack.release(world.stack.dead_letters(1), world.stack.dlq_url)
    return nsf, unnotified


def test_operator_policy_grants_exactly_the_actions_the_operator_commands_call(world: World) -> None:
    policy = world.operator_policy()
    assert sorted(actions_of(policy)) == sorted(OPERATOR_ACTIONS)
    table_arn = "arn:aws:dynamodb:{AWS_REGION}:{AWS_ACCOUNT_ID}:table/{IDEMPOTENCY_TABLE}".format(**world.names)
    for statement in policy["Statement"]:
        assert statement["Effect"] == "Allow" and statement["Resource"] != "*", statement
        if statement["Action"] == "dynamodb:Query":
            assert statement["Resource"] == table_arn + "/index/attention-index"


def test_operator_commands_work_with_the_operator_policy(
    world: World, consumers: Consumers, fake_bank: FakeBank
) -> None:
    nsf, unnotified = failed_and_unnotified(world, consumers, fake_bank)
    runs = {
        "redrive --dry-run": operator_cli(world, world.operator, fake_bank, "redrive", "--dry-run"),
        "list FAILED": operator_cli(world, world.operator, fake_bank, "list", "--status", "FAILED"),
        "list IN_PROGRESS": operator_cli(world, world.operator, fake_bank, "list", "--status", "IN_PROGRESS"),
        "status": operator_cli(world, world.operator, fake_bank, "status", nsf),
        "renotify": operator_cli(world, world.operator, fake_bank, "renotify", unnotified),
        "reopen": operator_cli(world, world.operator, fake_bank, "reopen", nsf, "--reason", "funded"),
        "redrive": operator_cli(
            world, world.operator, fake_bank, "redrive", "--reason", "PERMANENT_DEBIT_FAILURE"
        ),
    }
    for name, result in runs.items():
        assert result.returncode == 0, (name, result.stderr)
        assert "AccessDenied" not in result.stderr + result.stdout, (name, result.stderr)
    assert json.loads(runs["list FAILED"].stdout.splitlines()[-1])["count"] >= 1
    assert world.stack.record(unnotified)["status"] == "DEBITED"
    assert world.stack.record(nsf)["state"] in ("IN_PROGRESS", "DONE", "FAILED")
    assert json.loads(runs["redrive"].stdout.splitlines()[-1])["messages"] == 1


def test_the_stale_claims_check_works_with_its_scan_only_policy(world: World, fake_bank: FakeBank) -> None:
    """deploy/k8s/stale-claims-cronjob.yaml's command under deploy/iam-policy-stale-claims.json:
    a stale IN_PROGRESS claim makes it exit 6 (the Job fails, the alert fires), and the role
    can read nothing else."""
    checker = create_user(world.iam, f"stale-claims-{uuid.uuid4().hex[:8]}", render(STALE_CLAIMS_POLICY, world.names))
    check = ["list", "--status", "IN_PROGRESS", "--older-than-leases", "5", "--fail-if-any"]
    clean = operator_cli(world, checker, fake_bank, *check)
    assert "AccessDenied" not in clean.stderr, clean.stderr
    stale = new_id("stale-claim")
    long_ago = str(int(time.time() * 1000) - 3_600_000)
    world.stack.dynamodb.put_item(TableName=world.names["IDEMPOTENCY_TABLE"], Item={
        "pk": {"S": stale}, "state": {"S": "IN_PROGRESS"}, "leaseUntil": {"N": long_ago}, "updatedAt": {"N": long_ago},
        "createdAt": {"N": long_ago}, "fence": {"N": "1"}, "owner": {"S": "crashed-pod"}, "claimToken": {"S": "t"},
        "payloadHash": {"S": "h"}, "expiresAt": {"N": str(int(time.time()) + 86_400)}})
    found = operator_cli(world, checker, fake_bank, *check)
    assert found.returncode == 6, found.stderr
    assert stale in found.stdout and "AccessDenied" not in found.stderr
    denied = operator_cli(world, checker, fake_bank, "status", stale)
    assert denied.returncode == 1 and "AccessDenied" in denied.stderr, "GetItem is not the check's"
    world.stack.dynamodb.delete_item(TableName=world.names["IDEMPOTENCY_TABLE"], Key={"pk": {"S": stale}})


# What each action added for the operator commands does; without it that command fails (or,
# for the hand-back, warns), naming the action.
OPERATOR_ABLATIONS: dict[str, Callable[[str, str], list[str]]] = {
    "dynamodb:UpdateItem": lambda nsf, _: ["reopen", nsf, "--reason", "funded"],
    "dynamodb:Query": lambda _nsf, _u: ["list", "--status", "FAILED"],
    "dynamodb:Scan": lambda _nsf, _u: ["list", "--status", "IN_PROGRESS"],
    "sqs:ChangeMessageVisibility": lambda _nsf, _u: ["redrive", "--dry-run"],
}


@pytest.mark.parametrize("action", sorted(OPERATOR_ABLATIONS))
def test_each_operator_action_added_is_needed(
    action: str, world: World, consumers: Consumers, fake_bank: FakeBank
) -> None:
    nsf, unnotified = failed_and_unnotified(world, consumers, fake_bank)
    keys = create_user(world.iam, f"operator-{uuid.uuid4().hex[:8]}", without(world.operator_policy(), action))
    result = operator_cli(world, keys, fake_bank, *OPERATOR_ABLATIONS[action](nsf, unnotified))
    assert "AccessDenied" in result.stderr and action in result.stderr, (action, result.stderr)
    if action != "sqs:ChangeMessageVisibility":
        assert result.returncode == 1, (action, result.returncode, result.stderr)
    else:
        # The dry run still lists; the skipped messages stay hidden for the DLQ's timeout.
        assert world.stack.visible(world.stack.dlq_url) == 0
