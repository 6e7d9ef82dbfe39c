#!/usr/bin/env python3
"""`make bench`: the consumer measured side by side on every local backend stack, in one run,
written to build/bench/report.md with PNG plots beside it (a measurement, not a test).

Per stack (SQS emulator + DynamoDB emulator; the bank is bench/fast_bank.cpp, whose own
ceiling is measured first so it is known not to be the bottleneck):
  ceiling    bench/backend_ceiling.cpp drains a pre-filled queue with the consumer's request
             shapes and nothing else, through the consumer's own C++ clients, at growing
             concurrency (the fastest run is the ceiling; a rate that stopped rising shows the
             backend, not the generator, is the limit);
  fresh      one consumer (WORKERS=32) drains the same number of new charges: charges/s,
             CPU ms per charge (utime+stime from /proc/<pid>/stat), billed requests per charge
             by operation (the consumer's ic_aws_requests_total);
  duplicate  the same charges sent again (all duplicates of DONE records): requests and CPU
             per duplicate;
  idle       CPU and ReceiveMessage calls per minute with an empty queue, then SIGTERM to exit;
  peak RSS   VmHWM of the consumer at the end;
  budget     CPU per message of every process (emulators, bank, client) over the fastest
             ceiling run and the consumer's drain: where the shared cores went.
The full report alternates two more consumer drains with two more ceiling runs, because the
emulators keep warming up, and compares the fastest of each.
On ElasticMQ + dynalite, the fastest emulator stack, the floor too (bench/dependency_floor.cpp):
the resident memory of the consumer's libraries alone and the CPU of bare libcurl exchanges,
per charge; and there only: start-to-ready on an empty queue, SIGTERM-to-exit while busy,
scaling over WORKERS and consumer processes, memory at 10k charges (and 100k with --big),
instructions per charge from callgrind (two small runs under valgrind, the difference divided by
the difference in charges, so start-up cancels out), and the re-check run (bench/recheck_run.py:
two consumers and the Python fake bank, its latency raised from 300 ms to 1.5 s while they run;
how long after its original's final write a copy that arrived meanwhile is settled).
On fast+fast (bench/fast_aws/ as SQS and DynamoDB: the bench's backend, not an emulator;
the emulators cap the machine at about 600 charges/s) the same per-stack figures, then the runs
that need more than the emulators give: the latency-injected run (bench/latency_run.py:
charges/s against the capacity model at 32, 256 and 1,024 in flight with AWS and bank latency
added) and the peak run (bench/peak_run.py: 1,150 charges/s offered with a 200 ms bank, the
consumer at WORKERS=1024; the rate reached, its cores and peak RSS).

    .venv/bin/python -m bench.report [--smoke] [--big] [--build-dir build/release]

--smoke: tiny counts, ElasticMQ + dynalite and a small fast+fast drain (with one 32-in-flight
latency drain) only, no scaling, callgrind or peak run (CI, about 2 min).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    from bench import latency_run, peak_run, recheck_run
    from bench.consumer_throughput import TICKS, cpu_seconds, depth
    from tools.local_stack import ProcessManager, json_event, line_matching, start_moto, wait_until
    from tools.local_stack.charge_recovery import Consumer, image_environment
    from tools.local_stack.emulators import start_dynalite, start_elasticmq, start_fast_aws
    from tools.local_stack.paths import REPO_ROOT
except ModuleNotFoundError as e:  # run by path: sys.path[0] is bench/, not the root
    if e.name not in ("tools", "bench"):
        raise
    raise SystemExit("run it from the repository root as `.venv/bin/python -m bench.report`") from e

OUT = REPO_ROOT / "build" / "bench"
# (label, SQS backend, DynamoDB backend); "fast" is bench/fast_aws/, both on one process.
STACKS = [("moto+moto", "moto", "moto"), ("elasticmq+dynalite", "elasticmq", "dynalite"), ("elasticmq+moto", "elasticmq", "moto"),
          ("fast+fast", "fast", "fast")]
# The fastest emulator stack: the floor, readiness, scaling, memory and callgrind run there.
FAST = "elasticmq+dynalite"
# The bench's own backend: the latency-injected and peak runs, which the emulators would cap.
FAST_AWS = "fast+fast"


def status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def memory_breakdown(pid: int, top: int = 8) -> dict[str, Any]:
    """Resident memory now, from /proc/<pid>/smaps: anonymous (heap, arenas, thread stacks)
    against file-backed (the binary and its shared libraries), PSS, and the largest mappings
    by name (anonymous ones as "[anon]", stacks and arenas being nameless)."""
    by_name: Counter[str] = Counter()
    kb: Counter[str] = Counter()
    name = ""
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        fields = line.split()
        if "-" in fields[0] and not fields[0].endswith(":"):
            name = fields[5] if len(fields) > 5 else "[anon]"
        elif fields[0] in ("Rss:", "Pss:", "Anonymous:"):
            kb[fields[0]] += int(fields[1])
            if fields[0] == "Rss:":
                by_name[name.rsplit("/", 1)[-1]] += int(fields[1])
    return {"rssMiB": kb["Rss:"] / 1024, "pssMiB": kb["Pss:"] / 1024, "anonymousMiB": kb["Anonymous:"] / 1024,
            "fileMiB": (kb["Rss:"] - kb["Anonymous:"]) / 1024, "threads": status_kb(pid, "Threads"),
            "topMiB": {n: v / 1024 for n, v in by_name.most_common(top)}}


def group_cpu_seconds(pgid: int) -> float:
    """utime+stime of every live process in process group `pgid`: a server together with the
    runtime its launcher started (ElasticMQ's Python launcher and its JVM)."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone since the listing
            continue
        if int(fields[2]) == pgid:  # field 5 of stat, pgrp
            total += int(fields[11]) + int(fields[12])
    return total / TICKS


class CpuBudget:
    """CPU seconds that the stack's servers and one client (the ceiling's generator or the
    consumers) spend over a measured stretch: with every process on the same two cores, this
    says where the machine's time went and whether it was saturated."""

    def __init__(self, st: "Stack") -> None:
        self.st = st
        self.t0 = time.monotonic()
        self.before = {role: group_cpu_seconds(pgid) for role, pgid in st.servers.items()}

    def per_message(self, client_cpu_seconds: float, messages: int) -> dict[str, Any]:
        wall = time.monotonic() - self.t0
        ms = {role: 1000 * (group_cpu_seconds(pgid) - self.before[role]) / messages for role, pgid in self.st.servers.items()}
        ms["client"] = 1000 * client_cpu_seconds / messages
        return {"cpuMsPerMessage": ms, "coresBusy": sum(ms.values()) * messages / 1000 / wall}


def children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def requests_by_operation(consumers: list[Consumer]) -> Counter[str]:
    """ic_aws_requests_total summed over consumers and results, keyed by operation."""
    totals: Counter[str] = Counter()
    for consumer in consumers:
        status, text = consumer.get("/metrics")
        if status != 200:
            raise RuntimeError(f"/metrics answered {status}")
        for line in text.splitlines():
            if line.startswith("ic_aws_requests_total{"):
                labels, value = line[len("ic_aws_requests_total{") :].rsplit("} ", 1)
                fields = dict(part.split("=", 1) for part in labels.split(","))
                totals[fields["operation"].strip('"')] += float(value)
    return totals


@dataclass
class Stack:
    label: str
    build: Path
    manager: ProcessManager
    env: dict[str, str]
    bank_url: str
    servers: dict[str, int]  # role ("SQS elasticmq", "bank", ...) -> process group, for CpuBudget

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
        return json.loads(self.cli("send", "--count", str(count), "--duplicate-rate", str(duplicate_rate), "--seed", "7",
                                   "--id-prefix", prefix, env=env))

    def sqs(self) -> Any:
        import boto3

        return boto3.client("sqs", endpoint_url=self.env["AWS_ENDPOINT_URL_SQS"], region_name="us-east-1",
                            aws_access_key_id="testing", aws_secret_access_key="testing")

    def bank_stats(self) -> dict[str, int]:
        with urllib.request.urlopen(self.bank_url + "/v1/ledger", timeout=5) as response:
            return json.load(response)["stats"]

    def start_consumer(self, env: dict[str, str], name: str = "consumer", wrapper: list[str] | None = None,
                       bank_url: str | None = None, **settings: str) -> Consumer:
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


def drain(st: Stack, env: dict[str, str], consumers: list[Consumer], debits: int, timeout: float = 1800) -> float:
    """Seconds from now until the bank has `debits` debits and the queue is empty."""
    sqs = st.sqs()
    t0 = time.monotonic()
    wait_until(lambda: st.bank_stats()["debits"] >= debits and depth(sqs, env["CHARGE_QUEUE_URL"]) == 0,
               timeout=timeout, interval=0.05, description="drained")
    return time.monotonic() - t0


# (receivers, workers) of the ceiling runs: the consumer's own at WORKERS=32, then twice and
# four times that. The smoke run measures only the middle one.
CEILING_SIZES = [(2, 32), (4, 64), (8, 128)]
SMOKE_CEILING_SIZES = [(4, 64)]
# Consumer drains and 4×64 ceiling runs that alternate after the first consumer run (full report).
FAIR_REPEATS = 2


def ceiling(st: Stack, n: int, receivers: int, workers: int) -> dict[str, Any]:
    env = st.provision()
    st.send(env, n, 0.0, "CEIL")
    budget, client0 = CpuBudget(st), children_cpu_seconds()
    out = subprocess.run([str(st.build / "bench/ic_bench_backend_ceiling"), "--queue-url", env["CHARGE_QUEUE_URL"],
                          "--table", env["IDEMPOTENCY_TABLE"], "--receivers", str(receivers), "--workers", str(workers),
                          "--messages", str(n)],
                         env={**os.environ, **env}, capture_output=True, text=True, timeout=1800)
    try:
        run = json.loads(out.stdout)  # with its error count: failed requests are part of the figure
    except json.JSONDecodeError:
        raise RuntimeError(f"ceiling exited {out.returncode}: {out.stdout} {out.stderr[-2000:]}") from None
    # Includes the generator's start-up and its warm-up receive: a slight overstatement.
    run["cpu"] = budget.per_message(children_cpu_seconds() - client0, n)
    return run


def consumer_run(st: Stack, n: int, *, workers: int = 32, processes: int = 1, duplicates: bool = True,
                 idle_seconds: float = 0.0, env_overrides: dict[str, str] | None = None, bank_url: str | None = None,
                 prefix: str | None = None) -> dict[str, Any]:
    """Pre-fill n fresh charges, drain with `processes` consumers; optionally re-send them all
    as duplicates and drain again, then idle and stop. `env_overrides` and `bank_url` point the
    consumers (not the set-up) elsewhere, e.g. through bench/latency_run.py's delay proxies."""
    env = st.provision()
    debits0 = st.bank_stats()["debits"]
    prefix = prefix or f"CHG-{uuid.uuid4().hex[:6]}"
    st.send(env, n, 0.0, prefix)
    # Timed from the spawn: a consumer starts draining before its "started" line is seen, and
    # the ceiling's time includes its own connection set-up too.
    spawned, budget = time.monotonic(), CpuBudget(st)
    consumer_env = {**env, **(env_overrides or {})}
    consumers = [st.start_consumer(consumer_env, f"consumer-{i}", bank_url=bank_url, WORKERS=str(workers)) for i in range(processes)]
    r: dict[str, Any] = {"charges": n, "workers": workers, "processes": processes}
    drain(st, env, consumers, debits0 + n)
    seconds = time.monotonic() - spawned
    cpu = sum(cpu_seconds(c.pid) for c in consumers)
    fresh = requests_by_operation(consumers)
    r.update(chargesPerSecond=n / seconds, cpuMsPerCharge=1000 * cpu / n, cpu=budget.per_message(cpu, n),
             requestsPerCharge={op: v / n for op, v in sorted(fresh.items())})
    if duplicates:
        st.send(env, n, 0.0, prefix)
        t0 = time.monotonic()
        wait_until(lambda: depth(st.sqs(), env["CHARGE_QUEUE_URL"]) == 0, timeout=1800, interval=0.05, description="duplicates drained")
        r["duplicatesPerSecond"] = n / (time.monotonic() - t0)
        cpu2 = sum(cpu_seconds(c.pid) for c in consumers)
        total = requests_by_operation(consumers)
        r["cpuMsPerDuplicate"] = 1000 * (cpu2 - cpu) / n
        r["requestsPerDuplicate"] = {op: (total[op] - fresh[op]) / n for op in sorted(total) if total[op] > fresh[op]}
    r["peakRssMiB"] = max(status_kb(c.pid, "VmHWM") for c in consumers) / 1024
    r["memory"] = memory_breakdown(consumers[0].pid)
    if idle_seconds:
        before_cpu, before = sum(cpu_seconds(c.pid) for c in consumers), requests_by_operation(consumers)
        time.sleep(idle_seconds)  # a measurement window, not a wait for a condition
        scale = 60 / idle_seconds
        r["idleCpuMsPerMinute"] = 1000 * (sum(cpu_seconds(c.pid) for c in consumers) - before_cpu) * scale
        r["idleReceivesPerMinute"] = (requests_by_operation(consumers)["ReceiveMessage"] - before["ReceiveMessage"]) * scale
    r["sigtermToExitIdleSeconds"] = max(st.stop(c) for c in consumers)
    if st.bank_stats()["debits"] != debits0 + n:
        raise RuntimeError(f"bank has {st.bank_stats()['debits'] - debits0} debits for {n} charges")
    return r


def ready_and_busy_stop(st: Stack, n: int) -> dict[str, Any]:
    env = st.provision()
    t0 = time.monotonic()
    consumer = st.start_consumer(env, "consumer-ready")
    url = consumer.admin_url + "/health/ready"

    def ready() -> bool:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return response.status == 200
        except OSError:
            return False

    wait_until(ready, timeout=60, interval=0.005, description="ready")
    r = {"readyAfterStartSeconds": time.monotonic() - t0}
    st.stop(consumer)
    st.send(env, n, 0.0, "BUSY")
    debits0 = st.bank_stats()["debits"]
    consumer = st.start_consumer(env, "consumer-busy")
    wait_until(lambda: st.bank_stats()["debits"] > debits0, timeout=60, interval=0.01, description="busy")
    r["sigtermToExitBusySeconds"] = st.stop(consumer)
    return r


def callgrind_ir_per_charge(st: Stack, small: int, large: int) -> float:
    """Instructions per charge: (Ir(large) - Ir(small)) / (large - small), each run under callgrind."""
    totals = []
    for n in (small, large):
        env = st.provision()
        st.send(env, n, 0.0, f"CG{n}")
        out = OUT / f"callgrind.{n}.out"
        debits0 = st.bank_stats()["debits"]
        consumer = st.start_consumer(env, f"callgrind-{n}", wrapper=["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"])
        drain(st, env, [consumer], debits0 + n)
        st.stop(consumer, timeout=120)
        summary = next(line for line in out.read_text().splitlines() if line.startswith(("summary:", "totals:")))
        totals.append(int(summary.split()[1]))
    return (totals[1] - totals[0]) / (large - small)


def bank_ceiling(st: Stack, seconds: float = 3.0, threads: int = 16) -> float:
    """Requests/s the fast bank answers to Python keep-alive clients (a lower bound: the
    clients, not the bank, are likely the limit)."""
    import http.client
    import threading

    port = int(st.bank_url.rsplit(":", 1)[1])
    counts = [0] * threads
    stop_at = time.monotonic() + seconds

    def client(i: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port)
        while time.monotonic() < stop_at:
            try:
                conn.request("POST", "/v1/notifications", body=b"{}", headers={"Content-Type": "application/json"})
                conn.getresponse().read()
            except ConnectionError:  # the bank closed a kept-alive connection: a new one, like the consumer's curl
                conn.close()
                continue
            counts[i] += 1

    workers = [threading.Thread(target=client, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return sum(counts) / seconds


# bench/dependency_floor.cpp's exchange shapes, about the consumer's: a signed DynamoDB request
# (a ~1 KB body; content type, target, date, SDK and Authorization headers) and a bank call.
FLOOR_SHAPES = {"aws": ("1000", "6", "450"), "bank": ("300", "3", "120")}


def dependency_floor(st: Stack) -> dict[str, Any]:
    """The floor under the consumer's figures: the resident memory of its libraries alone,
    initialised (with the image's environment), and the CPU of bare libcurl exchanges against
    the fast bank, 32 in flight, both ways: blocking on 32 threads (the threaded transport) and
    on one epoll thread through curl's multi_socket API (the event-driven transport); floor_lines
    scales them by the consumer's exchanges per charge. Measured before anything else runs on
    the stack, so nothing competes with it."""
    tool = str(st.build / "bench/ic_bench_dependency_floor")
    env = {**os.environ, **image_environment()}
    memory = json.loads(subprocess.run([tool, "memory"], env=env, capture_output=True, text=True, timeout=60, check=True).stdout)
    transports: dict[str, dict[str, Any]] = {}
    for transport, flags in (("blocking", []), ("eventLoop", ["--event-loop"])):
        shapes = transports.setdefault(transport, {})
        for name, (body, headers, header_bytes) in FLOOR_SHAPES.items():
            out = subprocess.run([tool, "exchanges", "--url", st.bank_url + "/v1/notifications", "--threads", "32", "--requests", "2000",
                                  "--body-bytes", body, "--headers", headers, "--header-bytes", header_bytes, *flags],
                                 env=env, capture_output=True, text=True, timeout=300)
            if out.returncode != 0:
                raise RuntimeError(f"dependency_floor exchanges exited {out.returncode}: {out.stderr[-2000:]}")
            shapes[name] = json.loads(out.stdout)
    return {"memoryKiB": memory, "exchanges": transports["eventLoop"], "blockingExchanges": transports["blocking"]}


def plots(results: dict[str, Any]) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made = []
    stacks = [s for s in results["stacks"] if "consumer" in results["stacks"][s]]
    if stacks:
        fig, ax = plt.subplots(figsize=(7, 3.5))
        xs = range(len(stacks))
        ax.bar([x - 0.2 for x in xs], [results["stacks"][s]["ceiling"]["messagesPerSecond"] for s in stacks], 0.4, label="backend ceiling")
        ax.bar([x + 0.2 for x in xs], [results["stacks"][s]["consumerBest"] for s in stacks], 0.4, label="consumer")
        ax.set_xticks(list(xs), stacks)
        ax.set_ylabel("charges/s")
        ax.legend()
        ax.set_title("Consumer vs backend ceiling (fresh charges, WORKERS=32)")
        fig.tight_layout()
        fig.savefig(OUT / "throughput.png")
        made.append("throughput.png")
        fig, ax = plt.subplots(figsize=(7, 3.5))
        ax.bar(stacks, [results["stacks"][s]["consumer"]["cpuMsPerCharge"] for s in stacks])
        ax.set_ylabel("consumer CPU ms per charge")
        ax.set_title("Consumer CPU per fresh charge")
        fig.tight_layout()
        fig.savefig(OUT / "cpu.png")
        made.append("cpu.png")
    for key, title, xlabel in (("workers", "Scaling over WORKERS (one process)", "WORKERS"),
                               ("processes", "Scaling over consumer processes (WORKERS=32)", "processes")):
        rows = results.get("scaling", {}).get(key)
        if rows:
            fig, ax = plt.subplots(figsize=(6, 3.5))
            ax.plot([r[key] for r in rows], [r["chargesPerSecond"] for r in rows], marker="o", label="consumer")
            if "ceiling" in results["stacks"].get(FAST, {}):
                ceiling_rate = results["stacks"][FAST]["ceiling"]["messagesPerSecond"]
                ax.axhline(ceiling_rate, linestyle="--", color="grey", label="backend ceiling")
            ax.set_xscale("log", base=2)
            ax.set_xlabel(xlabel)
            ax.set_ylabel("charges/s")
            ax.set_title(f"{title}, {FAST}")
            ax.legend()
            fig.tight_layout()
            fig.savefig(OUT / f"scaling-{key}.png")
            made.append(f"scaling-{key}.png")
    return made


def ceiling_run_text(run: dict[str, Any]) -> str:
    return f"{run['receivers']}×{run['workers']}: {run['messagesPerSecond']:.0f} ({run['errors']})"


def saturation(runs: list[dict[str, Any]]) -> str:
    """Whether the largest run still gained on the smaller ones (then the ceiling is a lower bound)."""
    if len(runs) < 2:
        return ""
    smaller = max(run["messagesPerSecond"] for run in runs[:-1])
    if runs[-1]["messagesPerSecond"] > 1.1 * smaller:
        return " — still rising at the largest size: not saturated, the ceiling is a lower bound"
    return " — saturated: more concurrency no longer raises the rate"


def memory_text(m: dict[str, Any]) -> str:
    top = ", ".join(f"{name} {mib:.2f}" for name, mib in m["topMiB"].items())
    return (f"RSS {m['rssMiB']:.1f} = anonymous {m['anonymousMiB']:.1f} + file-backed {m['fileMiB']:.1f}; "
            f"PSS {m['pssMiB']:.1f}; {m['threads']} threads; largest: {top}")


def fmt_ops(ops: dict[str, float]) -> str:
    return ", ".join(f"{op} {v:.2f}" for op, v in ops.items()) or "-"


def cpu_budget_lines(results: dict[str, Any]) -> list[str]:
    """Where the cores went: CPU ms per message of each process, the fastest ceiling run beside
    the consumer's fresh drain. The consumer does all the ceiling's requests plus two bank calls
    per charge, and everything shares the same cores, so where they are busy the ratio of the
    two rates cannot exceed the ratio of their CPU per message."""
    rows = [(label, row) for label, row in results["stacks"].items() if "cpu" in row.get("consumer", {}) and "cpu" in row.get("ceiling", {})]
    if not rows:
        return []
    lines = ["", f"CPU per message of every process ({os.cpu_count()} cores shared; \"cores busy\" is their sum over the run's wall time):", "",
             "| stack | run | " + " | ".join(["servers (ms/message)", "client ms/message", "total ms/message", "cores busy"]) + " |",
             "|---|---|---|---:|---:|---:|"]
    for label, row in rows:
        for name, cpu in (("ceiling", row["ceiling"]["cpu"]), ("consumer", row["consumer"]["cpu"])):
            ms = cpu["cpuMsPerMessage"]
            servers = ", ".join(f"{role} {v:.3f}" for role, v in ms.items() if role != "client")
            lines.append(f"| {label} | {name} | {servers} | {ms['client']:.3f} | {sum(ms.values()):.3f} | {cpu['coresBusy']:.2f} |")
    return lines


def floor_lines(results: dict[str, Any]) -> list[str]:
    floor = results.get("floor")
    consumer = results["stacks"].get(FAST, {}).get("consumer")
    if not floor or not consumer:
        return []
    mem = floor["memoryKiB"]
    # The consumer's exchanges per fresh charge: its AWS requests and the two bank calls.
    aws_requests = sum(consumer["requestsPerCharge"].values())
    lines = ["", "The floor under the consumer's figures (bench/dependency_floor.cpp, no consumer code):", "",
             f"- resident memory of the consumer's shared libraries alone, initialised as its start-up initialises them, one thread: "
             f"{mem['rssKiB'] / 1024:.1f} MiB (anonymous {mem['anonymousKiB'] / 1024:.1f} + file-backed {mem['fileKiB'] / 1024:.1f}); "
             f"the consumer's peak: {consumer['peakRssMiB']:.1f} MiB"]
    for what, shapes in (("on one epoll thread through curl's multi_socket API, 32 in flight (the event-driven transport's way)",
                          floor["exchanges"]),
                         ("blocking, 32 threads (the threaded transport's way)", floor.get("blockingExchanges"))):
        if not shapes:
            continue
        aws, bank = shapes["aws"], shapes["bank"]
        per_charge = (aws_requests * aws["cpuUsPerExchange"] + 2 * bank["cpuUsPerExchange"]) / 1000
        lines.append(f"- CPU per bare libcurl exchange {what}, kept-alive, against the fast bank: "
                     f"{aws['cpuUsPerExchange']:.1f} µs AWS-sized ({aws['userUsPerExchange']:.1f} µs user, "
                     f"{aws['contextSwitchesPerExchange']:.2f} context switches), {bank['cpuUsPerExchange']:.1f} µs bank-sized; "
                     f"× {aws_requests + 2:.2f} exchanges per charge = {per_charge:.3f} ms per charge, "
                     f"against the consumer's {consumer['cpuMsPerCharge']:.3f} ms ({consumer['cpuMsPerCharge'] / per_charge:.1f}×)")
    return lines


def markdown(results: dict[str, Any], images: list[str]) -> str:
    lines = [
        "# Consumer benchmark", "",
        f"Generated by `{results['command']}` on {results['when']} ({results['machine']}). Build: `{results['build']}` "
        f"(LOG_LEVEL=info, WORKERS=32 unless stated). Bank: bench/fast_bank.cpp, answering "
        f"{results.get('bankCeiling', float('nan')):.0f} requests/s to Python keep-alive clients (a lower bound). Consumer figures are for "
        f"{results['charges']} fresh charges pre-filled in the queue, then the same charges again as duplicates; "
        "the ceiling is bench/backend_ceiling.cpp draining the same number with the consumer's request shapes "
        "(receive 10, claim, complete, delete batch) through the consumer's own clients, the fastest of its runs at the "
        "concurrencies listed below the table; \"consumer / ceiling\" divides the two.", "",
        "| stack | ceiling msg/s | consumer charges/s | consumer / ceiling | CPU ms/charge | CPU ms/duplicate | peak RSS MiB "
        "| requests/charge (fresh) | requests/duplicate | idle CPU ms/min | idle receives/min | SIGTERM→exit idle s |",
        "|---|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|",
    ]
    for label, row in results["stacks"].items():
        if "consumer" not in row:
            lines.append(f"| {label} | {row.get('error', 'not run')} |||||||||||")
            continue
        c, ceil, best = row["consumer"], row["ceiling"]["messagesPerSecond"], row["consumerBest"]
        lines.append(
            f"| {label} | {ceil:.0f} | {best:.0f} | {best / ceil:.2f} "
            f"| {c['cpuMsPerCharge']:.3f} | {c.get('cpuMsPerDuplicate', float('nan')):.3f} | {c['peakRssMiB']:.1f} "
            f"| {fmt_ops(c['requestsPerCharge'])} | {fmt_ops(c.get('requestsPerDuplicate', {}))} "
            f"| {c.get('idleCpuMsPerMinute', float('nan')):.0f} | {c.get('idleReceivesPerMinute', float('nan')):.1f} "
            f"| {c['sigtermToExitIdleSeconds']:.2f} |")
    lines += [f"\n{label}: {row['error']}" for label, row in results["stacks"].items() if "error" in row and "consumer" in row]
    lines += ["", "Backend ceiling runs (receivers × workers: messages/s, errors):", ""]
    lines += [f"- {label}: " + ", ".join(ceiling_run_text(run) for run in row["ceilingRuns"]) + saturation(row["ceilingRuns"])
              + (f"; alternating with the consumer's drains: {', '.join(ceiling_run_text(run) for run in row['ceilingAfter'])}"
                 f" (consumer drains: {', '.join(f'{rate:.0f}' for rate in row['consumerDrains'])} charges/s)"
                 if row.get("ceilingAfter") else "")
              for label, row in results["stacks"].items() if "ceilingRuns" in row]
    lines += cpu_budget_lines(results) + floor_lines(results) + latency_run.lines(results.get("latency", []), FAST_AWS)
    lines += peak_run.lines(results.get("peak"), FAST_AWS)
    lines += ["", "Resident memory of the consumer when its drains are done (/proc/<pid>/smaps, MiB):", ""]
    lines += [f"- {label}: {memory_text(row['consumer']['memory'])}" for label, row in results["stacks"].items() if "consumer" in row]
    fast = results.get("fastOnly", {})
    if fast:
        lines += ["", f"On {FAST}:", ""]
        if "readyAfterStartSeconds" in fast:
            lines.append(f"- ready after start, empty queue: {fast['readyAfterStartSeconds']:.3f} s")
            lines.append(f"- SIGTERM → exit while busy: {fast['sigtermToExitBusySeconds']:.2f} s")
        if "instructionsPerCharge" in fast:
            lines.append(f"- instructions per charge (callgrind Ir, {fast['callgrindRuns']}): {fast['instructionsPerCharge']:,.0f}")
        for row in fast.get("memory", []):
            lines.append(f"- peak RSS after {row['charges']} charges: {row['peakRssMiB']:.1f} MiB "
                         f"({row['chargesPerSecond']:.0f} charges/s, {row['cpuMsPerCharge']:.3f} CPU ms/charge)")
    for key in ("workers", "processes"):
        rows = results.get("scaling", {}).get(key)
        if rows:
            lines += ["", f"Scaling over {key} ({FAST}, {rows[0]['charges']} charges):", "",
                      f"| {key} | charges/s | CPU ms/charge | peak RSS MiB (max per process) |", "|---:|---:|---:|---:|"]
            lines += [f"| {r[key]} | {r['chargesPerSecond']:.0f} | {r['cpuMsPerCharge']:.3f} | {r['peakRssMiB']:.1f} |" for r in rows]
    lines += recheck_run.lines(results.get("recheck"), FAST)
    lines += [""] + [f"![{image}]({image})" for image in images] + ["", f"Wall time of this run: {results['wallSeconds']:.0f} s", ""]
    return "\n".join(lines)


def measure_stack(args: argparse.Namespace, results: dict[str, Any], row: dict[str, Any], label: str, sqs_kind: str,
                  dynamodb_kind: str, n: int) -> None:
    with stack(label, sqs_kind, dynamodb_kind, args.build_dir) as st:
        if "bankCeiling" not in results:
            results["bankCeiling"] = bank_ceiling(st)
        if label == FAST:
            results["floor"] = dependency_floor(st)
        # Warm-up (the JVM's JIT, dynalite's, connection pools): not reported. The emulators keep
        # warming after it, so the full report alternates further ceiling runs with consumer
        # drains below and the fastest of each counts. (The smoke skips them: CI has no time to
        # spare.) fast_aws has no JIT to warm, and its smoke drain is a sanity check: no warm-up,
        # no idle stretch.
        if label != FAST_AWS:
            ceiling(st, min(n, 200 if args.smoke else 1000), *SMOKE_CEILING_SIZES[0])
        row["ceilingRuns"] = [ceiling(st, n, r, w) for r, w in (SMOKE_CEILING_SIZES if args.smoke else CEILING_SIZES)]
        row["consumer"] = consumer_run(st, n, idle_seconds=30 if not args.smoke else 0 if label == FAST_AWS else 5)
        drains = [row["consumer"]["chargesPerSecond"]]
        if not args.smoke:
            # The emulators keep warming up run after run, so one consumer drain set against the
            # fastest of four ceiling runs would favour the ceiling: the two alternate, equally
            # often, and the fastest of each is compared.
            row["ceilingAfter"] = []
            for _ in range(FAIR_REPEATS):
                drains.append(consumer_run(st, n, duplicates=False)["chargesPerSecond"])
                row["ceilingAfter"].append(ceiling(st, n, *SMOKE_CEILING_SIZES[0]))
        row["consumerDrains"] = drains
        row["consumerBest"] = max(drains)
        row["ceiling"] = max([*row["ceilingRuns"], *row.get("ceilingAfter", [])], key=lambda run: run["messagesPerSecond"])
        print(json.dumps(row), flush=True)
        print(f"{label}: consumer {row['consumerBest']:.0f} charges/s = "
              f"{row['consumerBest'] / row['ceiling']['messagesPerSecond']:.2f} of the ceiling "
              f"({row['ceiling']['messagesPerSecond']:.0f} msg/s)", flush=True)
        if label == FAST_AWS:
            results["latency"] = latency_run.run(st, consumer_run, args.smoke)
            if not args.smoke:
                results["peak"] = peak_run.run(st, args.peak_seconds, group_cpu_seconds, status_kb)
                print(json.dumps({"peak": results["peak"]}), flush=True)
            return
        if label != FAST:
            return
        results["fastOnly"].update(ready_and_busy_stop(st, n))
        if args.smoke:
            return
        scale_n = min(2000, n)
        results["scaling"]["workers"] = [consumer_run(st, scale_n, workers=w, duplicates=False) for w in (8, 32, 128)]
        results["scaling"]["processes"] = [consumer_run(st, scale_n, processes=p, duplicates=False) for p in (1, 2, 4)]
        memory = [args.memory_charges] + ([100_000] if args.big else [])
        results["fastOnly"]["memory"] = [consumer_run(st, m, duplicates=False) for m in memory]
        small, large = args.callgrind
        results["fastOnly"]["instructionsPerCharge"] = callgrind_ir_per_charge(st, small, large)
        results["fastOnly"]["callgrindRuns"] = f"runs of {small} and {large} charges"
        results["recheck"] = recheck_run.run(st)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--smoke", action="store_true", help="tiny counts, ElasticMQ + dynalite and a fast+fast sanity drain only")
    parser.add_argument("--big", action="store_true", help="also measure memory at 100k charges")
    parser.add_argument("--charges", type=int, help="fresh charges per stack run (default 3000, moto 600)")
    parser.add_argument("--memory-charges", type=int, default=10_000, help="the memory run's charges (--big adds 100k)")
    parser.add_argument("--callgrind", type=int, nargs=2, default=(100, 300), metavar=("SMALL", "LARGE"),
                        help="charges of the two callgrind runs")
    parser.add_argument("--peak-seconds", type=float, default=30.0, help="how long the peak run offers 1,150 charges/s")
    parser.add_argument("--stacks", nargs="+", choices=[label for label, _, _ in STACKS], help="only these stacks (default: all)")
    parser.add_argument("--build-dir", type=Path, default=REPO_ROOT / "build" / "release")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    t_start = time.monotonic()
    n_fast, n_moto = (200, 0) if args.smoke else (3000, 600)
    if args.charges:
        n_fast = args.charges
        n_moto = min(args.charges, n_moto) if n_moto else 0
    results: dict[str, Any] = {
        "command": " ".join(["python -m bench.report", *sys.argv[1:]]), "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start", "build": str(args.build_dir),
        "charges": f"{n_fast} (moto: {n_moto})" if n_moto else str(n_fast), "stacks": {}, "scaling": {}, "fastOnly": {},
    }
    for label, sqs_kind, dynamodb_kind in STACKS:
        n = n_fast if label != "moto+moto" else n_moto
        if n == 0 or (args.smoke and label not in (FAST, FAST_AWS)) or (args.stacks and label not in args.stacks):
            continue
        print(f"== {label}", flush=True)
        row: dict[str, Any] = {}
        results["stacks"][label] = row
        try:
            measure_stack(args, results, row, label, sqs_kind, dynamodb_kind, n)
        except Exception as e:  # one stack failing must not lose the others' figures
            row["error"] = f"failed: {type(e).__name__}: {str(e)[:300]}"
            print(row["error"], flush=True)
    results["wallSeconds"] = time.monotonic() - t_start
    (OUT / "results.json").write_text(json.dumps(results, indent=2))
    (OUT / "report.md").write_text(markdown(results, plots(results)))
    print((OUT / "report.md").read_text())
    return 1 if any("error" in row for row in results["stacks"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())
