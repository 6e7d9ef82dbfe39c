"""The `charge-recovery` binary on the local stack: provision a table and queues through the
binary, run its subcommands, start and stop consumer processes, and read what they did with
boto3 (the reference client). Used by the system tests (through the pytest plugin's
`charge_stack` and `consumers` fixtures); the demo and the benchmark use the same binary
path convention (`binary_path`).

    stack = provision_stack(moto, lease_seconds=3)       # `charge-recovery provision`
    consumers = Consumers(processes, stack, fake_bank)
    c = consumers.start(WORKERS="2")                     # waits for "consumer started"
    stack.send_bodies([body, ...])                       # boto3 producer
    wait_until(lambda: stack.record("CHG-1"), ...)       # boto3 reads the table
    consumers.stop(c)                                    # SIGTERM; returns the exit status

The consumer long-polls with WaitTimeSeconds=20 and a poll in progress is not interrupted by
SIGTERM (listener_container.hpp documents it), so a consumer idle on an empty queue would take
up to 20 s to exit. `Consumers.stop` puts one throw-away message (WAKE_BODY) on the queue once
the consumer has logged "stopping": moto answers the poll at once and the container hands the
message back unstarted. Callers that inspect the queue after a stop skip WAKE_BODY.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.local_stack.fake_bank import FakeBank
from tools.local_stack.moto import MotoServer
from tools.local_stack.paths import REPO_ROOT, build_dir
from tools.local_stack.processes import ManagedProcess, ProcessFailed, ProcessManager, wait_until

WAKE_BODY = '{"shutdownWake":true}'


def binary_path(build: Path | None = None) -> Path:
    """Where `charge-recovery` is in a build tree (default: build_dir()); not checked."""
    return (build if build is not None else build_dir()) / "src" / "app" / "charge-recovery"


def binary() -> Path:
    """The binary of build_dir(); FileNotFoundError naming the path if it was not built."""
    path = binary_path()
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: build the charge-recovery target first")
    return path


def image_environment() -> dict[str, str]:
    """The process environment deploy/Containerfile's ENV lines give the binary (no settings:
    the systemd unit sets the same; the benchmark measures the consumer with it)."""
    lines = (REPO_ROOT / "deploy" / "Containerfile").read_text().splitlines()
    return dict(pair.split("=", 1) for line in lines if line.startswith("ENV ") for pair in line.split()[1:])


def thread_stacks(pid: int) -> str:
    """Every thread's backtrace of a hung process (gdb, when installed), for the failure report:
    a shutdown that hangs is rare and timing-dependent, so the first occurrence must say where."""
    if shutil.which("gdb") is None:
        return "\n(gdb not installed: no thread stacks)"
    try:
        out = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt"],
                             capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return "\n(gdb timed out)"
    return f"\n--- thread stacks of {pid} ---\n{out.stdout[-20000:]}"


# --- the binary's subcommands -------------------------------------------------------------


def run_cli(args: Iterable[str], env: Mapping[str, str], timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    """Run `charge-recovery <args>` to completion with the current environment plus `env`."""
    return subprocess.run(
        [str(binary()), *args],
        env={**os.environ, **env},
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def parse_assignments(text: str) -> dict[str, str]:
    """KEY=value lines (what `provision` prints)."""
    return dict(line.split("=", 1) for line in text.splitlines() if re.match(r"^[A-Z_]+=", line))


def provision_args(table: str, queue_name: str, dlq_name: str, max_receive_count: int) -> list[str]:
    return [
        "provision",
        "--table",
        table,
        "--queue-name",
        queue_name,
        "--dlq-name",
        dlq_name,
        "--max-receive-count",
        str(max_receive_count),
    ]


# --- the provisioned stack ----------------------------------------------------------------


def _plain(item: dict[str, Any]) -> dict[str, Any]:
    """DynamoDB attribute values as Python values (N as int)."""
    out: dict[str, Any] = {}
    for name, value in item.items():
        (kind, raw), = value.items()
        out[name] = int(raw) if kind == "N" else raw
    return out


@dataclass
class ChargeStack:
    """A table and two queues made by `charge-recovery provision`, plus boto3 clients."""

    moto: MotoServer
    table: str
    queue_url: str
    dlq_url: str
    lease_seconds: int
    max_receive_count: int
    sqs: Any = field(repr=False)
    dynamodb: Any = field(repr=False)

    def env(self) -> dict[str, str]:
        return {
            **self.moto.env(),
            "IDEMPOTENCY_TABLE": self.table,
            "CHARGE_QUEUE_URL": self.queue_url,
            "CHARGE_DLQ_URL": self.dlq_url,
        }

    def cli(self, *args: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
        return run_cli(args, self.env(), timeout)

    # producer ----------------------------------------------------------------------------

    def send_body(self, body: str, queue_url: str | None = None) -> str:
        """One SQS message; returns its MessageId."""
        return self.sqs.send_message(QueueUrl=queue_url or self.queue_url, MessageBody=body)["MessageId"]

    def send_bodies(self, bodies: Iterable[str], queue_url: str | None = None) -> list[str]:
        """SendMessageBatch in tens; returns the MessageIds in order. Fails on any failed entry."""
        bodies = list(bodies)
        ids: list[str] = []
        for start in range(0, len(bodies), 10):
            chunk = bodies[start : start + 10]
            reply = self.sqs.send_message_batch(
                QueueUrl=queue_url or self.queue_url,
                Entries=[{"Id": str(i), "MessageBody": body} for i, body in enumerate(chunk)],
            )
            if reply.get("Failed"):
                raise RuntimeError(f"SendMessageBatch refused entries: {reply['Failed']}")
            by_id = {entry["Id"]: entry["MessageId"] for entry in reply["Successful"]}
            ids.extend(by_id[str(i)] for i in range(len(chunk)))
        return ids

    # inspector ---------------------------------------------------------------------------

    def record(self, charge_id: str) -> dict[str, Any] | None:
        """The idempotency record, read strongly consistently; None when absent."""
        reply = self.dynamodb.get_item(TableName=self.table, Key={"pk": {"S": charge_id}}, ConsistentRead=True)
        return _plain(reply["Item"]) if "Item" in reply else None

    def records(self) -> dict[str, dict[str, Any]]:
        items: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {"TableName": self.table, "ConsistentRead": True}
        while True:
            page = self.dynamodb.scan(**kwargs)
            items.extend(page["Items"])
            if "LastEvaluatedKey" not in page:
                break
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        return {item["pk"]: item for item in map(_plain, items)}

    def final_record(self, charge_id: str, timeout: float = 30.0) -> dict[str, Any]:
        """Wait until the record is DONE or FAILED and return it."""

        def final() -> dict[str, Any] | None:
            record = self.record(charge_id)
            return record if record and record["state"] in ("DONE", "FAILED") else None

        return wait_until(final, timeout=timeout, interval=0.2, description=f"{charge_id} recorded final")

    def depth(self, queue_url: str | None = None) -> int:
        """Messages on the queue: visible + in flight + delayed (moto's counts are exact)."""
        names = [
            "ApproximateNumberOfMessages",
            "ApproximateNumberOfMessagesNotVisible",
            "ApproximateNumberOfMessagesDelayed",
        ]
        attributes = self.sqs.get_queue_attributes(QueueUrl=queue_url or self.queue_url, AttributeNames=names)[
            "Attributes"
        ]
        return sum(int(attributes.get(name, 0)) for name in names)

    def visible(self, queue_url: str | None = None) -> int:
        attributes = self.sqs.get_queue_attributes(
            QueueUrl=queue_url or self.queue_url, AttributeNames=["ApproximateNumberOfMessages"]
        )["Attributes"]
        return int(attributes["ApproximateNumberOfMessages"])

    def wait_drained(self, timeout: float = 30.0, queue_url: str | None = None) -> None:
        wait_until(lambda: self.depth(queue_url) == 0, timeout=timeout, interval=0.2, description="queue drained")

    def collect(self, count: int, queue_url: str | None = None, timeout: float = 30.0, hide_for: int = 120) -> list[dict[str, Any]]:
        """Receive `count` distinct messages (with all attributes), hiding each for `hide_for`
        seconds so none is received twice; nothing is deleted. Waits for in-flight ones."""
        url = queue_url or self.queue_url
        seen: dict[str, dict[str, Any]] = {}

        def enough() -> bool:
            reply = self.sqs.receive_message(
                QueueUrl=url,
                MaxNumberOfMessages=10,
                WaitTimeSeconds=1,
                VisibilityTimeout=hide_for,
                MessageAttributeNames=["All"],
                MessageSystemAttributeNames=["All"],
            )
            for message in reply.get("Messages", []):
                seen.setdefault(message["MessageId"], message)
            return len(seen) >= count

        wait_until(enough, timeout=timeout, interval=0.0, description=f"{count} messages received from {url}")
        return list(seen.values())

    def release(self, messages: Iterable[dict[str, Any]], queue_url: str | None = None) -> None:
        """Make received messages visible again at once."""
        for message in messages:
            self.sqs.change_message_visibility(
                QueueUrl=queue_url or self.queue_url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
            )

    def delete(self, messages: Iterable[dict[str, Any]], queue_url: str | None = None) -> None:
        for message in messages:
            self.sqs.delete_message(QueueUrl=queue_url or self.queue_url, ReceiptHandle=message["ReceiptHandle"])

    def dead_letters(self, count: int, timeout: float = 30.0) -> list[dict[str, Any]]:
        """Wait until the DLQ holds `count` messages and return them (not deleted)."""
        wait_until(lambda: self.depth(self.dlq_url) >= count, timeout=timeout, interval=0.2, description=f"{count} dead letters")
        return self.collect(count, self.dlq_url)


def attribute(message: dict[str, Any], name: str) -> str | None:
    """A String message attribute of a received message."""
    value = message.get("MessageAttributes", {}).get(name)
    return None if value is None else value["StringValue"]


def provision_stack(moto: MotoServer, *, lease_seconds: int = 3, max_receive_count: int = 10) -> ChargeStack:
    """`charge-recovery provision` with fresh names; fails with its stderr if it fails."""
    suffix = uuid.uuid4().hex[:8]
    table, queue_name, dlq_name = f"charges-{suffix}", f"charge-due-{suffix}", f"charge-due-dlq-{suffix}"
    env = {**moto.env(), "LEASE_SECONDS": str(lease_seconds)}
    result = run_cli(provision_args(table, queue_name, dlq_name, max_receive_count), env)
    if result.returncode != 0:
        raise RuntimeError(f"provision exited {result.returncode}: {result.stderr}")
    printed = parse_assignments(result.stdout)
    if printed.get("IDEMPOTENCY_TABLE") != table:
        raise RuntimeError(f"provision did not report table {table}: {result.stdout}")
    return ChargeStack(
        moto=moto,
        table=table,
        queue_url=printed["CHARGE_QUEUE_URL"],
        dlq_url=printed["CHARGE_DLQ_URL"],
        lease_seconds=lease_seconds,
        max_receive_count=max_receive_count,
        sqs=moto.sqs(),
        dynamodb=moto.dynamodb(),
    )


# --- consumer processes -------------------------------------------------------------------


class Consumer:
    """A running `charge-recovery run`, with its admin port and its JSON log."""

    def __init__(self, process: ManagedProcess) -> None:
        self.process = process
        self.started: dict[str, Any] = process.ready_info
        self.admin_url = f"http://127.0.0.1:{self.started['adminPort']}"

    @property
    def pid(self) -> int:
        return self.process.pid

    def logs(self) -> list[dict[str, Any]]:
        return self.process.json_lines("stderr")

    def logged(self, msg: str, **fields: Any) -> list[dict[str, Any]]:
        """Log lines with that msg whose fields have the given values."""
        return [line for line in self.logs() if line.get("msg") == msg and all(line.get(k) == v for k, v in fields.items())]

    def get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(self.admin_url + path, timeout=5) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def metric(self, name: str, **labels: str) -> float:
        """Sum of the samples of `name` whose labels include `labels` (0 when none)."""
        status, text = self.get("/metrics")
        if status != 200:
            raise RuntimeError(f"GET /metrics answered {status}: {text}")
        total = 0.0
        pattern = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$")
        for line in text.splitlines():
            match = pattern.match(line)
            if not match or match.group(1) != name:
                continue
            sample_labels = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', match.group(2) or ""))
            if all(sample_labels.get(k) == v for k, v in labels.items()):
                total += float(match.group(3))
        return total


def _started(proc: ManagedProcess, timeout: float) -> dict[str, Any]:
    def found() -> dict[str, Any] | None:
        return next((line for line in proc.json_lines("stderr") if line.get("msg") == "consumer started"), None)

    return proc.wait_for(found, timeout, 'stderr log line "consumer started"')


class Consumers:
    """Starts consumers against one stack and fake bank; stop() and stop_all() SIGTERM them
    and return their exit statuses (the `consumers` fixture asserts 0 at teardown)."""

    def __init__(self, processes: ProcessManager, stack: ChargeStack, bank: FakeBank) -> None:
        self.processes = processes
        self.stack = stack
        self.bank = bank
        self.running: list[Consumer] = []
        self.exit_codes: dict[int, int] = {}

    def env(self, **overrides: str) -> dict[str, str]:
        return {
            **self.stack.env(),
            **self.bank.env(),
            "LEASE_SECONDS": str(self.stack.lease_seconds),
            "WORKERS": "2",
            "ADMIN_ADDR": "127.0.0.1:0",
            "LOG_LEVEL": "info",
            "SHUTDOWN_GRACE_SECONDS": "20",
            **overrides,
        }

    def start(self, name: str = "consumer", **overrides: str) -> Consumer:
        """Start `charge-recovery run`; env overrides by variable name, e.g. WORKERS="4"."""
        proc = self.processes.start(name, [str(binary()), "run"], env=self.env(**overrides), ready=_started, timeout=20.0)
        consumer = Consumer(proc)
        self.running.append(consumer)
        return consumer

    def start_many(self, count: int, **overrides: str) -> list[Consumer]:
        """`count` consumers with the same settings, named consumer-1 ... consumer-N."""
        return [self.start(f"consumer-{i}", **overrides) for i in range(1, count + 1)]

    def stop(self, consumer: Consumer, timeout: float = 45.0) -> int:
        """SIGTERM; once it logged "stopping", wake its long poll if the queue is empty; wait."""
        return self.stop_many([consumer], timeout)[0]

    def stop_many(self, consumers: list[Consumer], timeout: float = 45.0) -> list[int]:
        for consumer in consumers:
            if consumer.process.alive():
                os.killpg(consumer.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        last_wake = 0.0
        while any(c.process.alive() for c in consumers):
            if time.monotonic() > deadline:
                tails = "\n".join(c.process.log_tail() + thread_stacks(c.pid) for c in consumers if c.process.alive())
                raise ProcessFailed(f"consumers still running {timeout:.0f} s after SIGTERM\n{tails}")
            alive = [c for c in consumers if c.process.alive()]
            stopping = all(c.logged("stopping") for c in alive)
            if stopping and time.monotonic() - last_wake > 2.0 and self.stack.visible() == 0:
                # One message per idle poll; after its hand-back it may wake another consumer.
                self.stack.send_bodies([WAKE_BODY] * len(alive))
                last_wake = time.monotonic()
            time.sleep(0.05)
        codes = []
        for consumer in consumers:
            code = self.processes.stop(consumer.process)
            self.exit_codes[consumer.pid] = code
            if consumer in self.running:
                self.running.remove(consumer)
            codes.append(code)
        return codes

    def kill(self, consumer: Consumer) -> int:
        """SIGKILL (a crash): nothing is flushed or handed back. Returns the exit status."""
        os.killpg(consumer.pid, signal.SIGKILL)
        wait_until(lambda: not consumer.process.alive(), timeout=10, description=f"{consumer.pid} killed")
        self.running.remove(consumer)
        return self.processes.stop(consumer.process)

    def stop_all(self) -> dict[int, int]:
        """Stop every running consumer; returns pid -> exit status of each one ever stopped."""
        if self.running:
            self.stop_many(list(self.running))
        return dict(self.exit_codes)
