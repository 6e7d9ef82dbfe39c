"""The stack a chaos run works on: one moto for SQS and a second for DynamoDB (so the store
can be killed and restarted without losing the queues: moto keeps everything in memory), or
ElasticMQ and dynalite for the AWS-fault scenarios, the consumers then reaching each through an
AWS proxy (tools/local_stack/aws_proxy.py) whose fault mode the nemesis switches; the fake
bank, and consumer slots, each running `charge-recovery run` with an optional clock offset
(libfaketime) and, in a stall scenario, what its Stall adds (tools/chaos/stalls.py: settings,
a stderr pipe). Built on tools/local_stack."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

T = TypeVar("T")

from tools.local_stack import ProcessManager, binary, start_fake_bank, start_moto, wait_until
from tools.local_stack.aws_proxy import Faults, start_aws_proxy
from tools.local_stack.emulators import start_dynalite, start_elasticmq
from tools.local_stack.charge_recovery import Consumer, _started, parse_assignments, provision_args, run_cli
from tools.local_stack.moto import MOTO_LAUNCHER, MotoServer
from tools.local_stack.paths import PYTHON
from tools.local_stack.processes import ManagedProcess, json_event
from tools.local_stack.tcp_proxy import Mode, TcpProxy

if TYPE_CHECKING:
    from tools.chaos.stalls import Stall

FAKETIME_LIB = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1")


def faketime_env(offset_ms: int) -> dict[str, str]:
    """Environment that sets a process's wall clock `offset_ms` ahead of true time (behind when
    negative). The monotonic clock is left alone: timers and timeouts stay real."""
    if offset_ms == 0:
        return {}
    if not FAKETIME_LIB.exists():
        raise FileNotFoundError(f"{FAKETIME_LIB} is missing: install the Debian package faketime (scripts/install-deps.sh)")
    return {
        "LD_PRELOAD": str(FAKETIME_LIB),
        "FAKETIME": f"{offset_ms / 1000:+.3f}",
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
        "FAKETIME_NO_CACHE": "1",
    }


@dataclass
class Slot:
    """One consumer position; its process changes when the nemesis kills and restarts it."""

    index: int
    offset_ms: int = 0
    consumer: Consumer | None = None
    restarts: int = 0
    instances: list[tuple[str, ManagedProcess, int]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"c{self.index}.{self.restarts}"


class Spawner:
    """Starts processes on one thread that lives as long as the stack. Children die with the
    thread that forked them (PR_SET_PDEATHSIG, tools/local_stack/processes.py), so a process
    the nemesis restarts must not be forked by the nemesis's short-lived threads."""

    def __init__(self) -> None:
        self._jobs: queue.Queue[tuple[Callable[[], Any], Future[Any]] | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="spawner", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while (job := self._jobs.get()) is not None:
            call, future = job
            try:
                future.set_result(call())
            except BaseException as e:
                future.set_exception(e)

    def call(self, fn: Callable[[], T]) -> T:
        future: Future[T] = Future()
        self._jobs.put((fn, future))
        return future.result()

    def close(self) -> None:
        self._jobs.put(None)
        self._thread.join()


class ChaosStack:
    def __init__(self, log_dir: Path, lease_seconds: int, workers: int, max_receive_count: int, seed: int,
                 extra_env: dict[str, str] | None = None, store_proxy: bool = False, emulators: bool = False,
                 stall: Stall | None = None) -> None:
        self.stall = stall
        self.spawner = Spawner()
        self.manager = ProcessManager(log_dir)
        self.lease_seconds = lease_seconds
        self.workers = workers
        self.max_receive_count = max_receive_count
        self.emulators = emulators
        if emulators:
            self.sqs_server: Any = start_elasticmq(self.manager)
            self.ddb_server: Any = start_dynalite(self.manager)
        else:
            self.sqs_server = start_moto(self.manager, name="moto-sqs")
            self.ddb_server = start_moto(self.manager, name="moto-dynamodb")
        # The consumers' way to the emulators (the harness's own clients go direct): faults off
        # until the nemesis switches them on.
        self.aws_proxies = {
            "sqs": start_aws_proxy(self.manager, self.sqs_server.endpoint_url, service="sqs"),
            "dynamodb": start_aws_proxy(self.manager, self.ddb_server.endpoint_url, service="dynamodb"),
        } if emulators else {}
        self.ddb_port = int(self.ddb_server.process.ready_info["port"])
        self.bank = start_fake_bank(self.manager, seed=seed)
        self.extra_env = dict(extra_env or {})
        # store-outage-long takes DynamoDB away through this proxy; the harness's own clients
        # (records, provisioning) keep talking to moto directly.
        self.proxy = TcpProxy("127.0.0.1", self.ddb_port) if store_proxy else None
        self.sqs = self.sqs_server.sqs(read_timeout=10, retries={"max_attempts": 10, "mode": "standard"})
        self.dynamodb = self.ddb_server.dynamodb(read_timeout=10, retries={"max_attempts": 10, "mode": "standard"})
        self.names: tuple[str, str, str] | None = None
        self.queue_url = ""
        self.dlq_url = ""
        self.slots: list[Slot] = []

    # --- environment and provisioning -------------------------------------------------------

    def aws_env(self) -> dict[str, str]:
        return {
            **self.sqs_server.env(),
            "AWS_ENDPOINT_URL_SQS": self.sqs_server.endpoint_url,
            "AWS_ENDPOINT_URL_DYNAMODB": self.ddb_server.endpoint_url,
            "LEASE_SECONDS": str(self.lease_seconds),
        }

    def store_proxy_mode(self, mode: Mode) -> None:
        if self.proxy is None:
            raise RuntimeError("this stack has no store proxy (store_proxy=True)")
        self.proxy.set_mode(mode)

    def set_aws_faults(self, service: str, faults: Faults) -> None:
        if service not in self.aws_proxies:
            raise RuntimeError("this stack has no AWS proxies (emulators=True)")
        self.aws_proxies[service].set_faults(faults)

    def aws_fault_stats(self) -> dict[str, dict[str, int]]:
        return {service: proxy.stats() for service, proxy in self.aws_proxies.items()}

    def provision(self, suffix: str) -> None:
        """Fresh table and queues (`charge-recovery provision`), names ending in `suffix`."""
        self.names = (f"charges-{suffix}", f"charge-due-{suffix}", f"charge-due-dlq-{suffix}")
        self._provision()

    def _provision(self) -> None:
        assert self.names is not None
        table, queue, dlq = self.names
        result = run_cli(provision_args(table, queue, dlq, self.max_receive_count), self.aws_env())
        if result.returncode != 0:
            raise RuntimeError(f"provision exited {result.returncode}: {result.stderr}")
        printed = parse_assignments(result.stdout)
        self.queue_url, self.dlq_url = printed["CHARGE_QUEUE_URL"], printed["CHARGE_DLQ_URL"]

    def reconcile(self) -> list[dict[str, Any]]:
        """`charge-recovery reconcile --full` of the bank's export against the table: its lines
        (the discrepancies, then the summary). Exit 0 or 6; anything else is the run's error."""
        assert self.names is not None
        done = subprocess.run(
            [str(binary()), "reconcile", "--ledger", "-", "--full"],
            input=self.bank.ledger_csv(),
            env={**os.environ, **self.aws_env(), "IDEMPOTENCY_TABLE": self.names[0]},
            capture_output=True, text=True, timeout=120, check=False)
        if done.returncode not in (0, 6):
            raise RuntimeError(f"reconcile exited {done.returncode}: {done.stderr}")
        return [json.loads(line) for line in done.stdout.splitlines()]

    def consumer_env(self, slot: Slot) -> dict[str, str]:
        assert self.names is not None
        return {
            **self.aws_env(),
            **self.bank.env(),
            "IDEMPOTENCY_TABLE": self.names[0],
            "CHARGE_QUEUE_URL": self.queue_url,
            "CHARGE_DLQ_URL": self.dlq_url,
            "WORKERS": str(self.workers),
            "ADMIN_ADDR": "127.0.0.1:0",
            # The history (history.py) is read from the per-step lines (claim decided, debited,
            # recorded, ...), which are debug lines; at info a charge has one line.
            "LOG_LEVEL": "debug",
            "SHUTDOWN_GRACE_SECONDS": "30",
            **({"AWS_ENDPOINT_URL_DYNAMODB": self.proxy.url} if self.proxy is not None else {}),
            **({"AWS_ENDPOINT_URL_SQS": self.aws_proxies["sqs"].url,
                "AWS_ENDPOINT_URL_DYNAMODB": self.aws_proxies["dynamodb"].url} if self.aws_proxies else {}),
            **self.extra_env,
            **faketime_env(slot.offset_ms),
            **(self.stall.env(slot, self) if self.stall is not None else {}),
        }

    # --- consumers --------------------------------------------------------------------------

    def start_consumers(self, offsets_ms: list[int]) -> None:
        self.slots = [Slot(i + 1, offset) for i, offset in enumerate(offsets_ms)]
        for slot in self.slots:
            self.start(slot)

    def start(self, slot: Slot) -> None:
        env = self.consumer_env(slot)
        pump = self.stall is not None and self.stall.pump_stderr
        proc = self.spawner.call(lambda: self.manager.start(slot.name, [str(binary()), "run"], env=env, ready=_started,
                                                            timeout=30, pump_stderr=pump))
        slot.consumer = Consumer(proc)
        slot.instances.append((slot.name, proc, slot.offset_ms))

    def signal(self, slot: Slot, signum: int) -> None:
        if slot.consumer is not None and slot.consumer.process.alive():
            os.killpg(slot.consumer.pid, signum)

    def kill_and_restart(self, slot: Slot) -> str:
        """SIGKILL (a crash: nothing flushed or handed back), then a new process in the slot."""
        killed = slot.name
        assert slot.consumer is not None
        self.signal(slot, signal.SIGKILL)
        wait_until(lambda: not slot.consumer.process.alive(), timeout=10, description=f"{killed} killed")
        slot.restarts += 1
        self.start(slot)
        return killed

    def stop_consumers(self) -> None:
        """SIGKILL every consumer once the run is judged. Not SIGTERM: an idle consumer waits
        out its 20 s long poll before it exits (docs/design.md §4), which would add 20 s to
        every scenario, and graceful shutdown is not what this suite tests (the system tests
        do). Their logs are complete: every line is written whole as it happens."""
        for slot in self.slots:
            if slot.consumer is not None and slot.consumer.process.alive():
                self.signal(slot, signal.SIGKILL)
                self.manager.stop(slot.consumer.process)

    # --- the store --------------------------------------------------------------------------

    def pause_store(self) -> None:
        for moto in (self.sqs_server, self.ddb_server):
            os.killpg(moto.process.pid, signal.SIGSTOP)

    def resume_store(self) -> None:
        for moto in (self.sqs_server, self.ddb_server):
            os.killpg(moto.process.pid, signal.SIGCONT)

    def restart_dynamodb(self) -> None:
        """Kill the DynamoDB emulator and start a new one on the same port: every record is
        gone. The table is provisioned again (the queues, on the other moto, are untouched)."""
        os.killpg(self.ddb_server.process.pid, signal.SIGKILL)
        self.manager.stop(self.ddb_server.process)
        argv = [PYTHON, "-m", MOTO_LAUNCHER, "--port", str(self.ddb_port)]
        deadline = time.monotonic() + 30
        while True:  # the port can take a moment to be free again
            try:
                proc = self.spawner.call(
                    lambda: self.manager.start("moto-dynamodb", argv, ready=json_event("listening"), timeout=30))
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        self.ddb_server = MotoServer(proc, f"http://127.0.0.1:{self.ddb_port}", True)
        self.dynamodb = self.ddb_server.dynamodb(read_timeout=10, retries={"max_attempts": 10, "mode": "standard"})
        self._provision()

    # --- inspection ---------------------------------------------------------------------------

    def depth(self, url: str) -> int:
        names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed"]
        attributes = self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
        return sum(int(attributes.get(n, 0)) for n in names)

    def in_flight(self) -> tuple[int, int]:
        names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
        attributes = self.sqs.get_queue_attributes(QueueUrl=self.queue_url, AttributeNames=names)["Attributes"]
        return int(attributes[names[0]]), int(attributes[names[1]])

    def records(self) -> dict[str, dict[str, Any]]:
        assert self.names is not None
        items: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {"TableName": self.names[0], "ConsistentRead": True}
        while True:
            page = self.dynamodb.scan(**kwargs)
            items.extend(page["Items"])
            if "LastEvaluatedKey" not in page:
                break
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        out = {}
        for item in items:
            plain = {k: (int(v["N"]) if "N" in v else next(iter(v.values()))) for k, v in item.items()}
            out[plain["pk"]] = plain
        return out

    def dead_letters(self) -> list[dict[str, Any]]:
        """Every DLQ message (body and failureReason), hidden while collected, none deleted."""
        want = self.depth(self.dlq_url)
        seen: dict[str, dict[str, Any]] = {}
        deadline = time.monotonic() + 60
        while len(seen) < want and time.monotonic() < deadline:
            reply = self.sqs.receive_message(QueueUrl=self.dlq_url, MaxNumberOfMessages=10, WaitTimeSeconds=1,
                                             VisibilityTimeout=600, MessageAttributeNames=["All"])
            for m in reply.get("Messages", []):
                reason = m.get("MessageAttributes", {}).get("failureReason", {}).get("StringValue")
                seen.setdefault(m["MessageId"], {"body": m["Body"], "reason": reason})
        return list(seen.values())

    def close(self) -> None:
        if self.stall is not None:
            self.stall.close()
        if self.proxy is not None:
            self.proxy.close()
        for slot in self.slots:
            self.signal(slot, signal.SIGCONT)
        try:
            self.resume_store()
        except ProcessLookupError:
            pass
        try:
            self.manager.stop_all()
        finally:
            self.spawner.close()

