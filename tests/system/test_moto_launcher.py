"""tools/moto_server.py: DynamoDB made atomic by the launcher's lock (with a negative control
showing the race without it), SQS long polls not blocked by it, moto's reset endpoint and
environment switches passed through, clean start-up and shutdown."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tools.local_stack.moto import MotoServer, start_moto
from tools.local_stack.paths import PYTHON, REPO_ROOT
from tools.local_stack.processes import ProcessManager, json_event

TABLE = "idempotency"
THREADS = 50

# A hung server must fail the test, not the CI job (pytest-timeout; fixtures still tear down).
pytestmark = pytest.mark.timeout(60)


def create_table(ddb: Any, name: str = TABLE) -> None:
    ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )


def conditional_put(ddb: Any, key: str, owner: int) -> None:
    ddb.put_item(
        TableName=TABLE,
        Item={"pk": {"S": key}, "owner": {"N": str(owner)}},
        ConditionExpression="attribute_not_exists(pk)",
    )


# An upsert shaped like the claim (conditional UpdateItem). moto checks the condition and
# then validates the update expression before writing the item; a longer expression widens
# that window, which makes the race without the lock show up in most rounds.
_FILLER = ", ".join(f"a{i} = :owner" for i in range(40))


def conditional_upsert(ddb: Any, key: str, owner: int) -> None:
    ddb.update_item(
        TableName=TABLE,
        Key={"pk": {"S": key}},
        UpdateExpression=f"SET #owner = :owner, {_FILLER}",
        ConditionExpression="attribute_not_exists(pk)",
        ExpressionAttributeNames={"#owner": "owner"},
        ExpressionAttributeValues={":owner": {"N": str(owner)}},
    )


Write = Callable[[Any, str, int], None]


def race(ddb: Any, write: Write, key: str, threads: int = THREADS) -> list[int]:
    """`threads` threads released together each try the conditional write; returns the
    owners whose write succeeded. Any error other than the condition failing propagates."""
    barrier = threading.Barrier(threads)
    winners: list[int] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def attempt(owner: int) -> None:
        barrier.wait()
        try:
            write(ddb, key, owner)
        except ddb.exceptions.ConditionalCheckFailedException:
            return
        except BaseException as e:  # surfaced below, in the test's thread
            with lock:
                errors.append(e)
            return
        with lock:
            winners.append(owner)

    workers = [threading.Thread(target=attempt, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    if errors:
        raise errors[0]
    return winners


def owner_of(ddb: Any, key: str) -> int:
    item = ddb.get_item(TableName=TABLE, Key={"pk": {"S": key}}, ConsistentRead=True)["Item"]
    return int(item["owner"]["N"])


def race_client(moto: MotoServer) -> Any:
    # No SDK retries: each thread's single attempt is what the emulator decided.
    return moto.dynamodb(retries={"max_attempts": 1, "mode": "standard"}, max_pool_connections=THREADS)


@pytest.mark.parametrize("write", [conditional_put, conditional_upsert], ids=["PutItem", "UpdateItem"])
def test_concurrent_conditional_writes_on_one_key_have_exactly_one_winner(moto: MotoServer, write: Write) -> None:
    ddb = race_client(moto)
    create_table(ddb)
    for round_no in range(3):
        key = f"CHG-{round_no}"
        winners = race(ddb, write, key)
        assert len(winners) == 1, f"round {round_no}: {len(winners)} writers passed attribute_not_exists(pk)"
        assert owner_of(ddb, key) == winners[0]


def test_negative_control_without_the_lock_the_race_has_several_winners(processes: ProcessManager) -> None:
    # Shows the test above can fail: the same race against plain (unlocked) moto lets more
    # than one writer pass the condition. Measured: >1 winner in ~80% of rounds; 20 rounds
    # bound the test (all 20 single-winner by chance is ~1e-14).
    unlocked = start_moto(processes, dynamodb_lock=False, name="moto-unlocked")
    assert unlocked.process.ready_info["dynamodbLock"] is False
    ddb = race_client(unlocked)
    create_table(ddb)
    counts = []
    for round_no in range(20):
        counts.append(len(race(ddb, conditional_upsert, f"CHG-{round_no}")))
        if counts[-1] > 1:
            break
    assert max(counts) > 1, f"no double winner in {len(counts)} rounds: {counts}"


def test_dynamodb_is_served_while_an_sqs_long_poll_is_pending(moto: MotoServer) -> None:
    sqs = moto.sqs()
    ddb = moto.dynamodb()
    create_table(ddb)
    queue_url = sqs.create_queue(QueueName="charge-due")["QueueUrl"]

    sent_at: list[float] = []
    sqs.meta.events.register("before-send.sqs.ReceiveMessage", lambda **_: sent_at.append(time.monotonic()))
    poll: dict[str, Any] = {}

    def long_poll() -> None:
        response = sqs.receive_message(QueueUrl=queue_url, WaitTimeSeconds=2)
        poll["returned_at"] = time.monotonic()
        poll["messages"] = response.get("Messages", [])

    poller = threading.Thread(target=long_poll)
    poller.start()
    calls: list[tuple[float, float]] = []
    try:
        deadline = time.monotonic() + 10
        while poller.is_alive() and time.monotonic() < deadline:
            started = time.monotonic()
            ddb.put_item(TableName=TABLE, Item={"pk": {"S": f"K-{len(calls)}"}, "owner": {"N": "1"}})
            calls.append((started, time.monotonic()))
    finally:
        poller.join(timeout=30)
    assert not poller.is_alive()
    assert poll["messages"] == []
    sent, returned = sent_at[0], poll["returned_at"]
    assert returned - sent >= 1.5, "the receive did not long-poll"
    # Calls that started well after the long poll was sent and finished before it returned:
    # impossible if the long poll held the lock that DynamoDB requests take.
    during = [c for c in calls if c[0] >= sent + 0.3 and c[1] < returned]
    assert during, f"no DynamoDB call completed during the long poll ({len(calls)} calls)"


def test_reset_endpoint_empties_dynamodb_and_sqs(moto: MotoServer) -> None:
    ddb, sqs = moto.dynamodb(), moto.sqs()
    create_table(ddb)
    sqs.create_queue(QueueName="charge-due")
    assert ddb.list_tables()["TableNames"] == [TABLE]
    moto.reset()
    assert ddb.list_tables()["TableNames"] == []
    assert sqs.list_queues().get("QueueUrls", []) == []


def test_moto_auth_switch_is_passed_through_from_the_environment(
    moto: MotoServer, processes: ProcessManager
) -> None:
    assert moto.dynamodb().list_tables()["TableNames"] == []  # default: no auth checks

    strict = start_moto(processes, env={"INITIAL_NO_AUTH_ACTION_COUNT": "0"}, name="moto-auth")
    for client in (strict.dynamodb(retries={"max_attempts": 1}), strict.sqs(retries={"max_attempts": 1})):
        with pytest.raises(client.exceptions.ClientError) as failure:
            client.list_tables() if client.meta.service_model.service_name == "dynamodb" else client.list_queues()
        error = failure.value.response
        assert error["ResponseMetadata"]["HTTPStatusCode"] == 403
        assert "InvalidClientTokenId" in str(error["Error"])


def test_module_form_port_file_and_clean_exit_on_sigterm(processes: ProcessManager, tmp_path: Path) -> None:
    port_file = tmp_path / "moto.port"
    proc = processes.start(
        "moto-cli",
        [PYTHON, "-m", "tools.moto_server", "--port", "0", "--port-file", str(port_file)],
        cwd=REPO_ROOT,
        ready=json_event("listening"),
        timeout=30,
    )
    port = proc.ready_info["port"]
    assert int(port_file.read_text()) == port
    assert proc.ready_info["dynamodbLock"] is True
    server = MotoServer(proc, f"http://127.0.0.1:{port}", dynamodb_lock=True)
    server.dynamodb().list_tables()
    assert processes.stop(proc) == 0
    events = [line.get("event") for line in proc.json_lines("stderr")]
    assert "request" in events
    assert events[-2:] == ["stopping", "stopped"]


# --- SQS: the launcher's lock ------------------------------------------------------------------

SQS_THREADS = 16
SQS_MESSAGES_PER_THREAD = 60


def send_receive_delete_concurrently(moto: MotoServer) -> tuple[set[str], set[str], int]:
    """SQS_THREADS threads each send SQS_MESSAGES_PER_THREAD messages one at a time while they
    receive and delete whatever they get, until every message sent has been received and
    deleted or 60 s pass. Returns (bodies sent, bodies received, messages left on the queue).

    Plain moto 5.2.1 can lose work here: DeleteMessage rebuilds the queue's list from a
    snapshot (a message sent meanwhile disappears, one deleted meanwhile comes back). The race
    window is narrow: issue 13 saw it in a long consumer run, but three rounds of this test
    against `--no-sqs-lock` did not hit it, so there is no negative control that could fail
    reliably; this test guards the lock against regressions that lose or duplicate messages."""
    sqs = moto.sqs(retries={"max_attempts": 1, "mode": "standard"}, max_pool_connections=SQS_THREADS)
    url = sqs.create_queue(QueueName="race", Attributes={"VisibilityTimeout": "30"})["QueueUrl"]
    sent: set[str] = set()
    received: set[str] = set()
    lock = threading.Lock()
    errors: list[BaseException] = []
    total = SQS_THREADS * SQS_MESSAGES_PER_THREAD
    deadline = time.monotonic() + 60
    barrier = threading.Barrier(SQS_THREADS)

    def work(thread: int) -> None:
        try:
            barrier.wait()
            for n in range(SQS_MESSAGES_PER_THREAD):
                body = f"t{thread}-m{n}"
                sqs.send_message(QueueUrl=url, MessageBody=body)
                with lock:
                    sent.add(body)
                got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=2).get("Messages", [])
                for message in got:
                    sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
                with lock:
                    received.update(m["Body"] for m in got)
            while time.monotonic() < deadline:
                with lock:
                    if len(received) >= total:
                        return
                got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", [])
                for message in got:
                    sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
                with lock:
                    received.update(m["Body"] for m in got)
                if not got and len(received) < total:
                    # Nothing visible: what is missing is either in flight elsewhere or lost.
                    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
                    if int(attributes["ApproximateNumberOfMessages"]) + int(
                        attributes["ApproximateNumberOfMessagesNotVisible"]
                    ) == 0:
                        return
        except BaseException as e:  # surfaced in the test's thread
            with lock:
                errors.append(e)

    workers = [threading.Thread(target=work, args=(i,)) for i in range(SQS_THREADS)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    if errors:
        raise errors[0]
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    left = int(attributes["ApproximateNumberOfMessages"]) + int(attributes["ApproximateNumberOfMessagesNotVisible"])
    return sent, received, left


def test_concurrent_sends_receives_and_deletes_lose_nothing(moto: MotoServer) -> None:
    # Depends on the launcher's SQS lock: the system tests and the chaos suite count every
    # message, and plain moto's SQS backend drops or resurrects some under concurrency.
    assert moto.process.ready_info["sqsLock"] is True
    sent, received, left = send_receive_delete_concurrently(moto)
    assert len(sent) == SQS_THREADS * SQS_MESSAGES_PER_THREAD
    assert received == sent, f"{len(sent - received)} messages sent but never received"
    assert left == 0, f"{left} messages still on the queue after every one was deleted"



def test_sqs_requests_are_served_while_a_long_poll_waits_and_the_poll_wakes_on_a_send(moto: MotoServer) -> None:
    # The SQS lock is released while a long poll waits (release_sqs_lock_while_waiting): other
    # SQS calls go through, and a send wakes the poll as in plain moto.
    sqs = moto.sqs()
    waiting = sqs.create_queue(QueueName="waiting")["QueueUrl"]
    other = sqs.create_queue(QueueName="other")["QueueUrl"]
    poll: dict[str, Any] = {}

    def long_poll() -> None:
        started = time.monotonic()
        poll["messages"] = sqs.receive_message(QueueUrl=waiting, WaitTimeSeconds=20).get("Messages", [])
        poll["seconds"] = time.monotonic() - started

    poller = threading.Thread(target=long_poll)
    poller.start()
    try:
        time.sleep(0.5)  # let the poll reach its wait; nothing below depends on the exact moment
        started = time.monotonic()
        for n in range(5):
            sqs.send_message(QueueUrl=other, MessageBody=f"other-{n}")
        assert len(sqs.receive_message(QueueUrl=other, MaxNumberOfMessages=10).get("Messages", [])) >= 1
        other_calls = time.monotonic() - started
        sqs.send_message(QueueUrl=waiting, MessageBody="wake")
    finally:
        poller.join(timeout=30)
    assert not poller.is_alive()
    assert [m["Body"] for m in poll["messages"]] == ["wake"]
    assert poll["seconds"] < 15, "the poll should return on the send, not at its 20 s timeout"
    assert other_calls < poll["seconds"], "the other queue's calls waited for the long poll"
