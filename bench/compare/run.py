#!/usr/bin/env python3
"""Our consumer beside two reference consumers of the same design, on one stack, in one run
(docs/performance.md, "Side by side with the Powertools and Spring designs"):

  ours        `charge-recovery run` (the release build), started as bench/stack.py starts it:
              WORKERS=32, LOG_LEVEL=info, the image's environment;
  powertools  bench/compare/powertools/consumer.py: boto3 and Powertools' idempotency utility
              (idempotent_function over DynamoDBPersistenceLayer, keyed on chargeId, payload
              validation), a ThreadPoolExecutor of 32, urllib3 to the bank; its own venv;
  spring      bench/compare/spring: Spring Boot 3.5 + Spring Cloud AWS 3.4 (@SqsListener at 32
              concurrent messages, the SDK's DynamoDbClient with conditional UpdateItems,
              RestClient over Apache HttpClient 5), `java -jar`.

The workload is the issue's: ElasticMQ + dynalite, the project's fake bank (`python -m
tools.fake_bank`), and per measured drain 2,000 fresh charges plus 30 % duplicates of them in
the same drain (`charge-recovery send --count 2000 --duplicate-rate 0.3`, shuffled), 32 in
flight. Before round 1 the stack itself is warmed up by one unmeasured drain (the emulators
run on a JVM and on node). Then, --rounds times, for each consumer in turn:

  start   a fresh process on its own fresh queue and table: ready s (spawn to its own
          "started" line) and the CPU it spent until then;
  cold    its first drain: the process is paused (SIGSTOP to its process group), the charges
          are sent, and it is resumed; from there until the queue is empty. CPU from spawn to
          that point, start-up included: what a consumer started by a scale-out pays;
  warm    after a warm-up drain of --warmup fresh charges (no duplicates; JIT, imports, pools),
          the same drain again: what a long-running consumer pays.

then all of the round's consumers idle together for --idle-seconds (CPU per minute on an empty
queue), and stop. CPU is the process group's utime+stime (/proc: JIT compiler and GC threads
included), sampled at every 50 ms poll of the queue and read at the drain's last debit (the
fake bank's time of it; with the fast bank, when the queue is empty); peak RSS its VmHWM.
Every drain must leave one debit and one notification per charge in the bank's ledger and no
repeated debit call. The table gives min / median over the rounds and each reference's ratio to
ours, for cold and warm drains apart: a JVM's first drain costs several times its warmed one, a
C++ or CPython process's about the same.

A duplicate that arrives while its original is in progress is where the designs differ: ours
holds it in process until the original's final write; the references put it back on the queue
(Powertools for the visibility timeout, Spring for the rest of the lease: 60 s each). Their
drains then end a minute after their last debit, idle meanwhile: the table shows the last debit's
time beside the drain's, and the in-progress copies counted from each consumer's log; its CPU
stops at the last debit, so that minute counts against no one.

    .venv/bin/python -m bench.compare.run [--charges 2000] [--duplicate-rate 0.3] [--rounds 2]
        [--warmup 4000] [--idle-seconds 60] [--tls] [--bank fake|fast]
        [--consumers ours powertools spring] [--build-dir build/release]

--tls: SQS and DynamoDB over HTTPS through TLS-terminating proxies, the bank over HTTPS with
client certificates, for all three (bench/compare/tls.py). --bank fast: the bench's C++ bank
(bench/fast_bank.cpp) instead of the fake bank (plain HTTP only).

Needs the release build (`make release-build`: charge-recovery, ic_bench_fast_bank), the
Powertools venv and the Spring jar: `make bench-compare` installs both and runs this. Writes
build/bench/compare/report.md (report-tls.md with --tls) and results.json (results-tls.json);
logs under build/bench/logs/compare/.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import signal
import ssl
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    from bench.compare import table, tls
    from bench.measure import depth, group_cpu_seconds, status_kb
    from bench.stack import OUT, CpuBudget, Stack, stack
    from tools.local_stack import ManagedProcess, ProcessFailed, wait_until
    from tools.local_stack.charge_recovery import image_environment
    from tools.local_stack.fake_bank import start_fake_bank
    from tools.local_stack.paths import REPO_ROOT
except ModuleNotFoundError as e:  # run by path: sys.path[0] is bench/compare/, not the root
    if e.name not in ("tools", "bench"):
        raise
    raise SystemExit("run it from the repository root as `.venv/bin/python -m bench.compare.run`") from e

COMPARE_OUT = OUT / "compare"
POWERTOOLS_PYTHON = REPO_ROOT / "build" / "compare" / "powertools-venv" / "bin" / "python"
POWERTOOLS_CONSUMER = REPO_ROOT / "bench" / "compare" / "powertools" / "consumer.py"
SPRING_JAR = REPO_ROOT / "build" / "compare" / "spring" / "charge-consumer-spring.jar"
CONSUMERS = ("ours", "powertools", "spring")
# Each consumer logs one line per duplicate that found its original in progress (ours then
# waits for it in process; the references put it back on the queue).
IN_PROGRESS = "DUPLICATE_IN_PROGRESS"


@dataclass
class Setup:
    """What every consumer of the run shares."""

    st: Stack
    bank_url: str
    ledger: Callable[[], dict[str, Any]]  # {"stats": {...}} and, from the fake bank, "debits"
    tls: tls.Tls | None
    args: argparse.Namespace


@dataclass
class Running:
    kind: str
    env: dict[str, str]  # its queue and table, on the emulators' plain ports (the harness's view)
    process: ManagedProcess
    ready_seconds: float
    startup_cpu_seconds: float


def powertools_table(st: Stack) -> str:
    """A table as Powertools' documentation creates it: hash key `id` (S), on demand, TTL on
    `expiration` (where the emulator has TTL)."""
    import boto3

    ddb = boto3.client("dynamodb", endpoint_url=st.env["AWS_ENDPOINT_URL_DYNAMODB"], region_name="us-east-1",
                       aws_access_key_id="testing", aws_secret_access_key="testing")
    name = f"powertools-{uuid.uuid4().hex[:8]}"
    ddb.create_table(TableName=name, KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                     AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}], BillingMode="PAY_PER_REQUEST")
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.2, "MaxAttempts": 100})
    try:
        ddb.update_time_to_live(TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "expiration"})
    except Exception:  # dynalite has no TTL; AWS does
        pass
    return name


def launch(s: Setup, kind: str, name: str) -> Running:
    """Spawn one consumer of `kind` on a fresh queue and table; ready time is spawn to the
    consumer's own "started" line (polled every 5 ms) on its empty queue."""
    env = s.st.provision()
    args = s.args
    child_env = s.tls.consumer_env(kind, env) if s.tls else dict(env)
    child_env |= {"CORE_BANKING_URL": s.bank_url, "NOTIFICATION_URL": s.bank_url, "WORKERS": str(args.workers)}
    if kind == "ours":
        argv = [str(s.st.build / "src/app/charge-recovery"), "run"]
        child_env |= {"ADMIN_ADDR": "127.0.0.1:0", "LOG_LEVEL": "info", **image_environment()}
        stream, pattern = "stderr", '"msg":"consumer started"'
    elif kind == "powertools":
        argv = [str(args.powertools_python), str(POWERTOOLS_CONSUMER)]
        child_env |= {"POWERTOOLS_IDEMPOTENCY_TABLE": powertools_table(s.st), "LOG_LEVEL": "INFO"}
        stream, pattern = "stdout", '"consumer started"'
    else:
        jvm = [*args.jvm_option, *(s.tls.jvm_options() if s.tls else [])]
        argv = [args.java, *jvm, "-jar", str(args.spring_jar)]
        child_env |= {"ADMIN_PORT": "0", "ADMIN_HOST": "127.0.0.1", "MAX_MESSAGES_PER_POLL": str(min(10, args.workers))}
        stream, pattern = "stdout", r"Started ChargeConsumerApplication in"
    t0 = time.monotonic()
    proc = s.st.manager.start(name, argv, env=child_env)
    regex = re.compile(pattern)
    try:
        while not any(regex.search(line) for line in proc.lines(stream)):
            if not proc.alive() or time.monotonic() - t0 > 180:
                raise ProcessFailed(f"{name}: no {stream} line {pattern!r} (exit status {proc.returncode})\n{proc.log_tail()}")
            time.sleep(0.005)
    except BaseException:
        s.st.manager.stop(proc)
        raise
    return Running(kind, env, proc, time.monotonic() - t0, group_cpu_seconds(proc.pid))


def in_progress_copies(proc: ManagedProcess) -> int:
    return sum(IN_PROGRESS in line for stream in ("stdout", "stderr") for line in proc.lines(stream))


def drained(s: Setup, env: dict[str, str], pid: int | None = None, timeout: float = 1800) -> list[tuple[float, float]]:
    """Until the queue holds no message, visible or in flight (every consumer deletes a message
    only when it is done with it). With `pid`, the process group's CPU seconds at every poll,
    as (monotonic time, CPU seconds), so that the CPU at the last debit can be read afterwards."""
    sqs = s.st.sqs()
    samples: list[tuple[float, float]] = []

    def empty() -> bool:
        if pid is not None:
            samples.append((time.monotonic(), group_cpu_seconds(pid)))
        return depth(sqs, env["CHARGE_QUEUE_URL"]) == 0

    wait_until(empty, timeout=timeout, interval=0.05, description="drained")
    return samples


def cpu_at(samples: list[tuple[float, float]], when: float) -> float:
    """The CPU of the first poll at or after `when` (the polls are 50 ms apart)."""
    return next((cpu for t, cpu in samples if t >= when), samples[-1][1])


def measured_drain(s: Setup, c: Running, phase: str, round_no: int) -> dict[str, Any]:
    """Paused while its queue is filled, so the drain starts from a full queue; a receive in
    flight when it stopped may take up to 10 messages then, which it handles after the resume,
    inside the drain. The cold drain's CPU counts from the spawn, start-up included."""
    n = s.args.charges
    pid = c.process.pid
    prefix = f"{phase[0].upper()}{round_no}-{uuid.uuid4().hex[:6]}"
    copies0 = in_progress_copies(c.process)
    os.killpg(pid, signal.SIGSTOP)
    try:
        stats0 = s.ledger()["stats"]
        sent = s.st.send(c.env, n, s.args.duplicate_rate, prefix)
    finally:
        cpu0 = 0.0 if phase == "cold" else group_cpu_seconds(pid)
        handshakes0 = s.tls.handshakes() if s.tls else 0
        budget = CpuBudget(s.st)
        t0, wall0 = time.monotonic(), time.time()
        os.killpg(pid, signal.SIGCONT)
    samples = drained(s, c.env, pid)
    seconds = time.monotonic() - t0
    cpu = group_cpu_seconds(pid) - cpu0
    servers = budget.per_message(cpu, n)
    ledger = s.ledger()
    stats = ledger["stats"]
    pids = group_pids(pid)
    r: dict[str, Any] = {
        "consumer": c.kind, "round": round_no, "phase": phase, "charges": n, "messages": sent["messages"], "prefix": prefix,
        "seconds": seconds, "chargesPerSecond": n / seconds, "cpuMsPerCharge": 1000 * cpu / n, "cpuMsPerChargeToEmpty": 1000 * cpu / n,
        "serversMsPerCharge": {role: v for role, v in servers["cpuMsPerMessage"].items() if role != "client"},
        "coresBusy": servers["coresBusy"], "inProgressCopies": in_progress_copies(c.process) - copies0,
        "peakRssMiB": max(status_kb(p, "VmHWM") for p in pids) / 1024, "threads": sum(status_kb(p, "Threads") for p in pids),
        "debits": stats["debits"] - stats0["debits"], "replays": stats["replays"] - stats0["replays"],
        "notifications": stats["notifications"] - stats0["notifications"]}
    if "debits" in ledger:  # the fake bank stamps each debit (ms since the epoch)
        last = max((d["createdAt"] for d in ledger["debits"] if d["chargeId"].startswith(prefix + "-")), default=None)
        if last is not None:
            r["lastDebitSeconds"] = last / 1000 - wall0
            r["chargesPerSecond"] = n / r["lastDebitSeconds"]
            # The table's figure: the charges' work, without the minute a reference then idles
            # until its put-back copies come round again (which only favours the references).
            r["cpuMsPerCharge"] = 1000 * (cpu_at(samples, t0 + r["lastDebitSeconds"]) - cpu0) / n
    if phase == "cold":
        r |= {"readySeconds": c.ready_seconds, "startupCpuSeconds": c.startup_cpu_seconds}
    if s.tls:
        r["awsHandshakes"] = s.tls.handshakes() - handshakes0
    r["exactlyOnce"] = r["debits"] == n and r["replays"] == 0 and r["notifications"] == n
    return r


def warm_up(s: Setup, c: Running, n: int) -> None:
    """`n` fresh charges, no duplicates (none waits out a visibility timeout), unmeasured."""
    debits0 = s.ledger()["stats"]["debits"]
    s.st.send(c.env, n, 0.0, f"WARM-{uuid.uuid4().hex[:6]}")
    drained(s, c.env)
    if s.ledger()["stats"]["debits"] - debits0 != n:
        raise RuntimeError(f"warm-up of {c.kind}: {s.ledger()['stats']['debits'] - debits0} debits for {n} charges")


def idle(running: dict[str, Running], seconds: float) -> dict[str, float]:
    """CPU ms per minute of each consumer over the same `seconds` on its empty queue."""
    before = {kind: group_cpu_seconds(c.process.pid) for kind, c in running.items()}
    time.sleep(seconds)
    return {kind: 60_000 * (group_cpu_seconds(c.process.pid) - before[kind]) / seconds for kind, c in running.items()}


def group_pids(pgid: int) -> list[int]:
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:
            pids.append(int(stat.parent.name))
    return pids


def start_bank(st: Stack, args: argparse.Namespace, tls_setup: tls.Tls | None) -> tuple[Stack, str, Callable[[], dict[str, Any]]]:
    """The bank the consumers call: the fake bank (over HTTPS with client certificates under
    --tls), or the stack's own fast bank. Returns the stack with the bank's process group as
    its "bank" server, the bank's URL and how the harness reads its ledger."""
    if args.bank == "fast":
        return st, st.bank_url, lambda: {"stats": st.bank_stats()}
    context = None
    if tls_setup:
        context = ssl.create_default_context(cafile=str(tls_setup.pki.ca))
        context.load_cert_chain(str(tls_setup.pki.client_cert), str(tls_setup.pki.client_key))
    bank = start_fake_bank(st.manager, extra_args=tls_setup.bank_args() if tls_setup else (), tls=context)
    bank.default_timeout = 60.0  # the ledger of a whole run is large
    return dataclasses.replace(st, bank_url=bank.url, servers={**st.servers, "bank": bank.process.pid}), bank.url, bank.ledger


def compare(st: Stack, args: argparse.Namespace, results: dict[str, Any]) -> None:
    tls_setup = None
    if args.tls:
        tls_setup = tls.start(st, args.java if "spring" in args.consumers else None)
        st = dataclasses.replace(st, servers={**st.servers, **{f"TLS proxy {k}": p.process.pid for k, p in tls_setup.proxies.items()}})
    st, bank_url, ledger = start_bank(st, args, tls_setup)
    s = Setup(st, bank_url, ledger, tls_setup, args)
    if args.stack_warmup:
        print(f"== stack warm-up: {args.stack_warmup} charges through ours", flush=True)
        c = launch(s, "ours", "stack-warm-up")
        warm_up(s, c, args.stack_warmup)
        st.manager.stop(c.process)
    for round_no in range(1, args.rounds + 1):
        running: dict[str, Running] = {}
        for kind in args.consumers:
            print(f"== round {round_no}: {kind}", flush=True)
            try:
                c = running[kind] = launch(s, kind, f"{kind}-{round_no}")
                results["drains"].append(d := measured_drain(s, c, "cold", round_no))
                print(json.dumps(d), flush=True)
                if args.warmup:
                    warm_up(s, c, args.warmup)
                results["drains"].append(d := measured_drain(s, c, "warm", round_no))
                print(json.dumps(d), flush=True)
            except Exception as e:  # one consumer failing must not lose the others' figures
                results["drains"].append({"consumer": kind, "round": round_no, "error": f"{type(e).__name__}: {str(e)[:300]}"})
                print(results["drains"][-1], flush=True)
        if args.idle_seconds and running:
            print(f"== round {round_no}: {len(running)} consumers idle for {args.idle_seconds:.0f} s", flush=True)
            for kind, ms in idle(running, args.idle_seconds).items():
                results["idle"].append({"consumer": kind, "round": round_no, "cpuMsPerMinute": ms})
        for c in running.values():
            st.manager.stop(c.process, grace=30)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--charges", type=int, default=2000, help="fresh charges per measured drain (default 2000)")
    parser.add_argument("--duplicate-rate", type=float, default=0.3,
                        help="duplicates of those charges mixed into the same drain, as a fraction of --charges (default 0.3)")
    parser.add_argument("--rounds", type=int, default=2, help="fresh processes of each consumer, one after another (default 2)")
    # The JVM's JIT keeps improving the Spring consumer for about 6,000 charges (its CPU per
    # charge over charges 2,000-4,000 was 1.4 times that from the 6,000th on): the cold drain
    # and this warm-up take the warm drain there.
    parser.add_argument("--warmup", type=int, default=4000, help="charges of the warm-up drain between the cold and the warm one (default 4000)")
    parser.add_argument("--stack-warmup", type=int, default=2000, help="charges drained by ours before round 1, unmeasured (default 2000)")
    parser.add_argument("--idle-seconds", type=float, default=60, help="the round's consumers idle together this long (default 60; 0: skip)")
    parser.add_argument("--workers", type=int, default=32)
    parser.add_argument("--tls", action="store_true", help="every call over TLS, the bank's with client certificates")
    parser.add_argument("--bank", choices=("fake", "fast"), default="fake", help="fake: tools/fake_bank (default); fast: bench/fast_bank.cpp")
    parser.add_argument("--consumers", nargs="+", choices=CONSUMERS, default=list(CONSUMERS))
    parser.add_argument("--build-dir", type=Path, default=REPO_ROOT / "build" / "release")
    parser.add_argument("--powertools-python", type=Path, default=POWERTOOLS_PYTHON)
    parser.add_argument("--spring-jar", type=Path, default=SPRING_JAR)
    parser.add_argument("--java", default="java", help="the JVM that runs the Spring jar (default: java on PATH)")
    parser.add_argument("--jvm-option", action="append", default=[], help="an option for that JVM (repeatable; default none)")
    args = parser.parse_args()
    if args.tls and args.bank == "fast":
        parser.error("--tls needs the fake bank: the fast bank speaks plain HTTP only")
    missing = [str(p) for p, kind in ((args.build_dir / "src/app/charge-recovery", "ours"), (args.build_dir / "bench/ic_bench_fast_bank", "ours"),
                                      (args.powertools_python, "powertools"), (args.spring_jar, "spring"))
               if (kind == "ours" or kind in args.consumers) and not p.exists()]
    if missing:
        parser.error(f"missing {', '.join(missing)}: `make bench-compare` builds and installs them")
    return args


def main() -> int:
    args = parse_args()
    COMPARE_OUT.mkdir(parents=True, exist_ok=True)
    t_start = time.monotonic()
    java_version = ""
    if "spring" in args.consumers:
        java_version = subprocess.run([args.java, "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    results: dict[str, Any] = {
        "command": " ".join(["python -m bench.compare.run", *sys.argv[1:]]), "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start", "build": str(args.build_dir),
        "charges": args.charges, "duplicateRate": args.duplicate_rate, "warmup": args.warmup, "rounds": args.rounds,
        "workers": args.workers, "tls": args.tls, "bank": args.bank, "consumers": args.consumers, "java": java_version,
        "drains": [], "idle": [],
    }
    with stack("compare", "elasticmq", "dynalite", args.build_dir) as st:
        compare(st, args, results)
    results["summary"] = table.summarize(results)
    results["wallSeconds"] = time.monotonic() - t_start
    results["machine"] += f", {os.getloadavg()[0]:.1f} at the end"
    suffix = "-tls" if args.tls else ""
    (COMPARE_OUT / f"results{suffix}.json").write_text(json.dumps(results, indent=2))
    report = table.markdown(results)
    (COMPARE_OUT / f"report{suffix}.md").write_text(report)
    print(report)
    failed = any("error" in d or not d["exactlyOnce"] for d in results["drains"])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
