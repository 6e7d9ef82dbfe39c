"""The stack every run of the bench drives: an SQS and a DynamoDB backend (emulators or the
bench's fast_aws), the bench's bank (bench/fast_bank.cpp), `charge-recovery` consumers, and the
network stand-in between them (bench/net_proxy.cpp: latency, TLS). Shared by every module of
bench/runs/ and by bench/compare/; it imports none of them.

    with stack("elasticmq+dynalite", "elasticmq", "dynalite", build) as st:
        env = st.provision()                      # a fresh table and queue
        st.send(env, 2000, 0.3, "CHG")            # `charge-recovery send`
        consumer = st.start_consumer(env)
        drain(st, env, [consumer], debits=2000)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.measure import depth, group_cpu_seconds
from tools.fake_bank.pki import Pki, make_pki
from tools.local_stack import ManagedProcess, ProcessManager, json_event, line_matching, start_moto, wait_until
from tools.local_stack.charge_recovery import Consumer, image_environment
from tools.local_stack.emulators import start_dynalite, start_elasticmq, start_fast_aws
from tools.local_stack.paths import REPO_ROOT

OUT = REPO_ROOT / "build" / "bench"
# (label, SQS backend, DynamoDB backend); "fast" is bench/fast_aws/, both on one process.
STACKS = [("moto+moto", "moto", "moto"), ("elasticmq+dynalite", "elasticmq", "dynalite"), ("elasticmq+moto", "elasticmq", "moto"),
          ("fast+fast", "fast", "fast")]
# The fastest emulator stack: the floor, readiness, scaling, memory, callgrind and the
# production variants run there.
FAST = "elasticmq+dynalite"
# The bench's own backend: the latency-injected and peak runs, which the emulators would cap.
FAST_AWS = "fast+fast"


@dataclass(frozen=True)
class Latency:
    """A delay with a tail: `tail_fraction` of requests take `tail_ms` instead of `ms`."""
    ms: float
    tail_ms: float = 0.0
    tail_fraction: float = 0.0

    @property
    def mean_ms(self) -> float:
        return (1 - self.tail_fraction) * self.ms + self.tail_fraction * self.tail_ms

    def args(self) -> list[str]:
        return ["--delay-ms", str(self.ms), "--tail-ms", str(self.tail_ms), "--tail-fraction", str(self.tail_fraction)]

    def to_json(self) -> dict[str, float]:
        return {"ms": self.ms, "tailMs": self.tail_ms, "tailFraction": self.tail_fraction}


NO_LATENCY = Latency(0.0)


@dataclass
class Proxy:
    """A running bench/net_proxy.cpp in front of one server."""
    process: ManagedProcess
    url: str

    def handshakes(self) -> int:
        """TLS handshakes completed so far (a plain proxy: connections accepted)."""
        return sum(1 for line in self.process.json_lines() if line.get("event") == "accepted"
                   or (line.get("event") == "handshake" and line.get("ok")))

    def refused(self) -> list[str]:
        """Why each failed handshake failed."""
        return [line["error"] for line in self.process.json_lines() if line.get("event") == "handshake" and not line.get("ok")]


@dataclass
class Stack:
    label: str
    build: Path
    manager: ProcessManager
    env: dict[str, str]
    bank_url: str
    servers: dict[str, int]  # role ("SQS elasticmq", "bank", ...) -> process group, for CpuBudget
    _pki: Pki | None = field(default=None, repr=False)

    def cli(self, *args: str, env: dict[str, str] | None = None) -> str:
        result = subprocess.run([str(self.build / "src/app/charge-recovery"), *args], env={**os.environ, **(env or self.env)},
                                capture_output=True, text=True, timeout=600)
        if result.returncode != 0:
            raise RuntimeError(f"charge-recovery {args[0]} exited {result.returncode}: {result.stderr}")
        return result.stdout

    def provision(self) -> dict[str, str]:
        """Fresh table and queues; returns the environment a consumer of them needs."""
        tag = uuid.uuid4().hex[:8]
        out = self.cli("provision", "--table", f"bench-{tag}", "--queue-name", f"bench-{tag}", "--dlq-name", f"bench-dlq-{tag}")
        return {**self.env, **dict(line.split("=", 1) for line in out.split())}

    def send(self, env: dict[str, str], count: int, duplicate_rate: float, prefix: str) -> dict[str, int]:
        """`charge-recovery send`: `count` charges <prefix>-000000..., and `duplicate_rate` × count
        copies of them shuffled in; the same prefix and count send the same bodies again."""
        return json.loads(self.cli("send", "--count", str(count), "--duplicate-rate", str(duplicate_rate), "--seed", "7",
                                   "--id-prefix", prefix, env=env))

    def sqs(self) -> Any:
        import boto3

        return boto3.client("sqs", endpoint_url=self.env["AWS_ENDPOINT_URL_SQS"], region_name="us-east-1",
                            aws_access_key_id="testing", aws_secret_access_key="testing")

    def bank_stats(self) -> dict[str, int]:
        """The bench bank's counts: debits, replays, notifications."""
        with urllib.request.urlopen(self.bank_url + "/v1/ledger", timeout=5) as response:
            return json.load(response)["stats"]

    def start_consumer(self, env: dict[str, str], name: str = "consumer", wrapper: list[str] | None = None,
                       bank_url: str | None = None, **settings: str) -> Consumer:
        """`charge-recovery run` as deployed (the image's environment), LOG_LEVEL=info, WORKERS=32,
        on `env` (queues and endpoints) and the bench bank or `bank_url`; `settings` override."""
        bank = bank_url or self.bank_url
        proc = self.manager.start(
            name, [*(wrapper or []), str(self.build / "src/app/charge-recovery"), "run"],
            env={**env, "CORE_BANKING_URL": bank, "NOTIFICATION_URL": bank, "ADMIN_ADDR": "127.0.0.1:0",
                 "LOG_LEVEL": "info", "WORKERS": "32", **image_environment(), **settings},
            ready=line_matching('"msg":"consumer started"', "stderr"), timeout=120.0)
        proc.ready_info = next(line for line in proc.json_lines("stderr") if line.get("msg") == "consumer started")
        return Consumer(proc)

    def stop(self, consumer: Consumer, timeout: float = 60.0) -> float:
        """SIGTERM, then seconds until the process exited (no wake-up message is sent)."""
        t0 = time.monotonic()
        os.killpg(consumer.pid, signal.SIGTERM)
        wait_until(lambda: not consumer.process.alive(), timeout=timeout, interval=0.01, description="consumer exit")
        elapsed = time.monotonic() - t0
        self.manager.stop(consumer.process)
        return elapsed

    def pki(self) -> Pki:
        """The test CA (tools/fake_bank/pki.py) of this stack's TLS: a server certificate for
        127.0.0.1 and a client certificate, both signed by it."""
        if self._pki is None:
            self._pki = make_pki(self.manager.log_dir / "pki")
        return self._pki

    def proxy(self, name: str, url: str, latency: Latency = NO_LATENCY, tls: bool = False,
              client_certificates: bool = False) -> Proxy:
        """bench/net_proxy.cpp in front of `url` (a loopback http URL with a port): `latency` added
        to each request, and with `tls` the client side served over TLS with the stack's server
        certificate (client certificates of its CA required if `client_certificates`)."""
        port = url.rsplit(":", 1)[1].split("/", 1)[0]
        argv = [str(self.build / "bench/ic_bench_net_proxy"), "--upstream-port", port, *latency.args()]
        if tls:
            pki = self.pki()
            argv += ["--tls-cert", str(pki.server_cert), "--tls-key", str(pki.server_key)]
            if client_certificates:
                argv += ["--tls-client-ca", str(pki.ca)]
        process = self.manager.start(name, argv, ready=json_event("listening"))
        return Proxy(process, f"{'https' if tls else 'http'}://127.0.0.1:{process.ready_info['port']}")

    def aws_tls_env(self) -> dict[str, str]:
        """What a consumer needs to trust the stack's TLS proxies in front of SQS and DynamoDB."""
        return {"AWS_CA_BUNDLE": str(self.pki().ca)}

    def bank_tls_env(self) -> dict[str, str]:
        """What a consumer needs for the bank's mutual TLS: the CA, its client certificate and key."""
        pki = self.pki()
        return {"BANK_TLS_CA_FILE": str(pki.ca), "BANK_TLS_CERT_FILE": str(pki.client_cert), "BANK_TLS_KEY_FILE": str(pki.client_key)}


@contextmanager
def stack(label: str, sqs_kind: str, dynamodb_kind: str, build: Path) -> Iterator[Stack]:
    manager = ProcessManager(OUT / "logs" / label)
    try:
        servers: dict[str, Any] = {}
        starters = {"moto": start_moto, "elasticmq": start_elasticmq, "dynalite": start_dynalite,
                    "fast": lambda m: start_fast_aws(m, build)}
        for kind in {sqs_kind, dynamodb_kind}:
            servers[kind] = starters[kind](manager)
        bank = manager.start("fast-bank", [str(build / "bench/ic_bench_fast_bank")], ready=json_event("listening"))
        env = {**servers[sqs_kind].env(), "AWS_ENDPOINT_URL_SQS": servers[sqs_kind].endpoint_url,
               "AWS_ENDPOINT_URL_DYNAMODB": servers[dynamodb_kind].endpoint_url}
        env.pop("AWS_ENDPOINT_URL")
        roles = {"SQS+DynamoDB": sqs_kind} if sqs_kind == dynamodb_kind else {"SQS": sqs_kind, "DynamoDB": dynamodb_kind}
        groups = {f"{role} {kind}": servers[kind].process.pid for role, kind in roles.items()}
        groups["bank"] = bank.pid
        yield Stack(label, build, manager, env, f"http://127.0.0.1:{bank.ready_info['port']}", groups)
    finally:
        manager.stop_all(grace=30)


class CpuBudget:
    """CPU seconds that the stack's servers and one client (the ceiling's generator or the
    consumers) spend over a measured stretch: with every process on the same two cores, this
    says where the machine's time went and whether it was saturated."""

    def __init__(self, st: Stack) -> None:
        self.st = st
        self.t0 = time.monotonic()
        self.before = {role: group_cpu_seconds(pgid) for role, pgid in st.servers.items()}

    def per_message(self, client_cpu_seconds: float, messages: int) -> dict[str, Any]:
        wall = time.monotonic() - self.t0
        ms = {role: 1000 * (group_cpu_seconds(pgid) - self.before[role]) / messages for role, pgid in self.st.servers.items()}
        ms["client"] = 1000 * client_cpu_seconds / messages
        return {"cpuMsPerMessage": ms, "coresBusy": sum(ms.values()) * messages / 1000 / wall}


def drain(st: Stack, env: dict[str, str], consumers: list[Consumer], debits: int, timeout: float = 1800) -> float:
    """Seconds from now until the bench bank has `debits` debits and the queue is empty."""
    sqs = st.sqs()
    t0 = time.monotonic()
    wait_until(lambda: st.bank_stats()["debits"] >= debits and depth(sqs, env["CHARGE_QUEUE_URL"]) == 0,
               timeout=timeout, interval=0.05, description="drained")
    return time.monotonic() - t0


def wait_empty(st: Stack, queue_url: str, timeout: float = 1800) -> float:
    """Seconds from now until the queue is empty: every message deleted, so every charge on it
    finished (for a bank the bench cannot ask cheaply while it works, e.g. the Python fake bank)."""
    sqs = st.sqs()
    t0 = time.monotonic()
    wait_until(lambda: depth(sqs, queue_url) == 0, timeout=timeout, interval=0.05, description="queue empty")
    return time.monotonic() - t0
