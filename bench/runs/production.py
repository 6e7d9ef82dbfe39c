"""Production's work: the consumer drained as a user runs it, next to the bench's best case
(issue 36). On ElasticMQ + dynalite, one consumer (WORKERS=32, LOG_LEVEL=info, the image's
environment) drains `charge-recovery send --count N --duplicate-rate 0.3` sent into a fresh
queue before it starts, in these variants, each adding one thing to the one before:

  best         the bench's best case: plain HTTP, the bench's C++ bank (bench/fast_bank.cpp),
               the N fresh charges drained first and 0.3 N duplicates of DONE records after
               (what the report's first table measures, with as many duplicates as the others);
  mixed        + the duplicates shuffled into the same drain (some arrive while their original
               is in flight);
  fakeBank     + the project's Python fake bank (tools/fake_bank) instead of the C++ one;
  tls          + TLS everywhere: HTTPS to SQS and DynamoDB through bench/net_proxy.cpp
               terminating TLS (AWS_CA_BUNDLE the test CA of tools/fake_bank/pki.py), and the
               fake bank serving HTTPS itself with client certificates required (BANK_TLS_*):
               production's harness;
  tlsBenchBank TLS everywhere with the C++ bank behind a TLS proxy requiring client
               certificates: TLS's cost without the Python bank on the same cores.

Each variant drains `rounds` times, the variants taking turns so that the emulators' warming
spreads over all of them, after one unreported warm-up drain. Per drain: the consumer's user
and kernel CPU (utime, stime of /proc/<pid>/stat, from its spawn to the empty queue), the
wall time from its spawn until the queue is empty (every message deleted: every charge
finished), peak RSS, requests by operation (its ic_aws_requests_total) and to the bank (its
debit, inquiry and notification counters), TLS handshakes (the proxies' accepted connections),
and the CPU of every other process of the stack. The bank's ledger must then hold exactly N
new debits. Then one more drain per variant runs under `strace -c -f`: system calls by call;
strace slows the consumer several-fold, so no CPU or rate is taken from that drain.
"""

from __future__ import annotations

import os
import shutil
import ssl
import subprocess
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench.measure import bank_requests, cpu_split, group_cpu_seconds, requests_by_operation, status_kb, strace_calls
from bench.stack import Proxy, Stack, wait_empty
from tools.local_stack.fake_bank import FakeBank, start_fake_bank

DUPLICATE_RATE = 0.3


@dataclass(frozen=True)
class Variant:
    key: str
    label: str
    short: str  # a column's heading
    mixed: bool  # duplicates shuffled into the same drain, rather than drained after it
    fake_bank: bool  # the Python fake bank, rather than bench/fast_bank.cpp
    tls: bool  # HTTPS to SQS and DynamoDB, mutual TLS to the bank


VARIANTS = [
    Variant("best", "best case: plain, C++ bank, duplicates drained apart", "best case", mixed=False, fake_bank=False, tls=False),
    Variant("mixed", "+ duplicates mixed in", "+ mixed", mixed=True, fake_bank=False, tls=False),
    Variant("fakeBank", "+ the Python fake bank", "+ fake bank", mixed=True, fake_bank=True, tls=False),
    Variant("tls", "+ TLS everywhere (production)", "+ TLS", mixed=True, fake_bank=True, tls=True),
    Variant("tlsBenchBank", "TLS everywhere, C++ bank", "TLS, C++ bank", mixed=True, fake_bank=False, tls=True),
]
# Issue 36's targets, on the variants they are set for (its harness, plain and over TLS): CPU ms
# per charge, system calls per charge.
TARGETS = {"fakeBank": {"name": "plain", "cpuMsPerCharge": 0.35, "syscallsPerCharge": 20},
           "tls": {"name": "over TLS", "cpuMsPerCharge": 0.45}}
BY_KEY = {v.key: v for v in VARIANTS}


@dataclass
class Endpoints:
    """Where one variant's consumer sends its requests, and how to read the bank's debits."""
    env: dict[str, str]  # the consumer's AWS endpoints and TLS files, over the queue's environment
    bank_url: str
    debits: Callable[[], int]
    proxies: dict[str, Proxy] = field(default_factory=dict)


class Network:
    """The servers the variants share, started on first use: the fake bank plain and over
    mutual TLS, and the TLS proxies in front of SQS, DynamoDB and the C++ bank."""

    def __init__(self, st: Stack) -> None:
        self.st = st
        self._banks: dict[bool, FakeBank] = {}
        self._proxies: dict[str, Proxy] = {}
        self.pids: dict[str, int] = {}  # role -> process group, beside the stack's servers

    def fake_bank(self, tls: bool) -> FakeBank:
        if tls not in self._banks:
            args: list[str] = []
            context = None
            if tls:
                pki = self.st.pki()
                args = ["--tls-cert", str(pki.server_cert), "--tls-key", str(pki.server_key), "--tls-client-ca", str(pki.ca)]
                context = ssl.create_default_context(cafile=str(pki.ca))
                context.load_cert_chain(str(pki.client_cert), str(pki.client_key))
            name = "fake-bank-https" if tls else "fake-bank"
            self._banks[tls] = start_fake_bank(self.st.manager, extra_args=args, name=name, tls=context)
            self.pids[name] = self._banks[tls].process.pid
        return self._banks[tls]

    def proxy(self, role: str, url: str, client_certificates: bool = False) -> Proxy:
        if role not in self._proxies:
            self._proxies[role] = self.st.proxy(f"tls-{role.lower()}", url, tls=True, client_certificates=client_certificates)
            self.pids[f"TLS proxy {role}"] = self._proxies[role].process.pid
        return self._proxies[role]

    def endpoints(self, variant: Variant) -> Endpoints:
        st = self.st
        env: dict[str, str] = {}
        proxies: dict[str, Proxy] = {}
        if variant.tls:
            proxies = {"SQS": self.proxy("SQS", st.env["AWS_ENDPOINT_URL_SQS"]),
                       "DynamoDB": self.proxy("DynamoDB", st.env["AWS_ENDPOINT_URL_DYNAMODB"])}
            env = {"AWS_ENDPOINT_URL_SQS": proxies["SQS"].url, "AWS_ENDPOINT_URL_DYNAMODB": proxies["DynamoDB"].url,
                   **st.aws_tls_env(), **st.bank_tls_env()}
        if variant.fake_bank:
            bank = self.fake_bank(variant.tls)
            return Endpoints(env, bank.url, lambda: bank.ledger()["stats"]["debits"], proxies)
        bank_url = st.bank_url
        if variant.tls:
            proxies["bank"] = self.proxy("bank", st.bank_url, client_certificates=True)
            bank_url = proxies["bank"].url
        return Endpoints(env, bank_url, lambda: st.bank_stats()["debits"], proxies)

    def cpu(self) -> dict[str, float]:
        """CPU seconds so far of every server process: the stack's and these."""
        return {role: group_cpu_seconds(pgid) for role, pgid in {**self.st.servers, **self.pids}.items()}


def traced_pid(strace_pid: int) -> int:
    """The consumer under `strace -f`: strace's child (it has started: its log line was read)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == strace_pid:  # field 4, ppid
                return int(stat.parent.name)
        except OSError:  # gone since the listing
            continue
    raise RuntimeError(f"strace (pid {strace_pid}) has no child")


def drain(st: Stack, net: Network, variant: Variant, n: int, name: str, strace_to: Path | None = None) -> dict[str, Any]:
    """One drain of n charges and round(0.3 n) duplicates in this variant."""
    ends = net.endpoints(variant)
    queues = st.provision()
    prefix = f"P{uuid.uuid4().hex[:6]}"
    duplicates = round(n * DUPLICATE_RATE)
    st.send(queues, n, DUPLICATE_RATE if variant.mixed else 0.0, prefix)
    debits0, handshakes0, servers0 = ends.debits(), {r: p.handshakes() for r, p in ends.proxies.items()}, net.cpu()
    wrapper = ["strace", "-c", "-f", "-o", str(strace_to)] if strace_to else None
    # Timed from the spawn: the consumer starts draining before its "started" line is read.
    spawned = time.monotonic()
    consumer = st.start_consumer({**queues, **ends.env}, name, wrapper=wrapper, bank_url=ends.bank_url)
    pid = traced_pid(consumer.pid) if strace_to else consumer.pid
    wait_empty(st, queues["CHARGE_QUEUE_URL"])
    seconds = time.monotonic() - spawned
    if not variant.mixed:  # the same bodies again, duplicates of DONE records, drained apart
        st.send(queues, duplicates, 0.0, prefix)
        seconds += wait_empty(st, queues["CHARGE_QUEUE_URL"])
    user, kernel = cpu_split(pid)
    r: dict[str, Any] = {
        "seconds": seconds, "userMs": 1000 * user / n, "kernelMs": 1000 * kernel / n, "cpuMsPerCharge": 1000 * (user + kernel) / n,
        "chargesPerSecond": n / seconds, "peakRssMiB": status_kb(pid, "VmHWM") / 1024,
        "requestsPerCharge": {op: v / n for op, v in sorted(requests_by_operation([consumer]).items())},
        "bankRequestsPerCharge": bank_requests([consumer]) / n,
        "handshakes": {role: p.handshakes() - handshakes0[role] for role, p in ends.proxies.items()},
        "serversMsPerCharge": {role: 1000 * (v - servers0[role]) / n for role, v in net.cpu().items() if role in servers0},
    }
    st.stop(consumer)
    debits = ends.debits() - debits0
    if debits != n:
        raise RuntimeError(f"{variant.key}: the bank has {debits} new debits for {n} charges")
    return r


def strace_available() -> bool:
    return shutil.which("strace") is not None and subprocess.run(
        ["strace", "-c", "-o", os.devnull, "true"], capture_output=True).returncode == 0


def run(st: Stack, out: Path, n: int = 2000, rounds: int = 2, keys: list[str] | None = None, warm_up: bool = True,
        strace: bool = True) -> dict[str, Any]:
    """The variants named by `keys` (default: all), `rounds` drains each, then one under strace."""
    variants = [BY_KEY[k] for k in keys] if keys else VARIANTS
    net = Network(st)
    out.mkdir(parents=True, exist_ok=True)
    if warm_up:  # the emulators' JIT, the fake bank's and proxies' first connections: not reported
        for variant in variants:
            drain(st, net, variant, min(n, 500), f"production-warm-{variant.key}")
    measured: dict[str, list[dict[str, Any]]] = {v.key: [] for v in variants}
    for i in range(rounds):
        for variant in variants:
            measured[variant.key].append(drain(st, net, variant, n, f"production-{variant.key}-{i}"))
            row = measured[variant.key][-1]
            print(f"production {variant.key} round {i + 1}: {row['cpuMsPerCharge']:.3f} CPU ms/charge (user {row['userMs']:.3f}, "
                  f"kernel {row['kernelMs']:.3f}), {row['chargesPerSecond']:.0f} charges/s, {row['peakRssMiB']:.1f} MiB, "
                  f"handshakes {row['handshakes']}", flush=True)
    traced: dict[str, Any] = {}
    strace_note = "" if strace and strace_available() else "strace not run" if not strace else "strace is not installed or may not trace here"
    if not strace_note:
        for variant in variants:
            path = out / f"strace-{variant.key}.txt"
            row = drain(st, net, variant, n, f"production-strace-{variant.key}", strace_to=path)
            calls = strace_calls(path.read_text())
            traced[variant.key] = {"calls": dict(calls.most_common()), "seconds": row["seconds"]}
            print(f"production {variant.key} under strace: {sum(calls.values()) / n:.1f} system calls per charge "
                  f"({', '.join(f'{c} {v / n:.1f}' for c, v in calls.most_common(6))})", flush=True)
    return {"charges": n, "duplicateRate": DUPLICATE_RATE, "duplicates": round(n * DUPLICATE_RATE), "workers": 32, "rounds": rounds,
            "variants": [{**asdict(v), "drains": measured[v.key], "strace": traced.get(v.key)} for v in variants],
            "straceNote": strace_note, "targets": {k: t for k, t in TARGETS.items() if k in measured},
            "loadAverage": os.getloadavg()[0]}
