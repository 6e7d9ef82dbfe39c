#!/usr/bin/env python3
"""Our consumer beside two reference consumers of the same design, on one stack, in one run
(docs/performance.md, "Side by side with the Powertools and Spring designs"):

  ours        `charge-recovery run` (the release build), started as bench/report.py starts it:
              WORKERS=32, LOG_LEVEL=info, the image's environment;
  powertools  bench/compare/powertools/consumer.py: boto3 and Powertools' idempotency utility
              (idempotent_function over DynamoDBPersistenceLayer, keyed on chargeId, payload
              validation), a ThreadPoolExecutor of 32, urllib3 to the bank; its own venv;
  spring      bench/compare/spring: Spring Boot 3.5 + Spring Cloud AWS 3.4 (@SqsListener at 32
              concurrent messages, the SDK's DynamoDbClient with conditional UpdateItems,
              RestClient over Apache HttpClient 5), `java -jar`.

One stack: ElasticMQ + dynalite with bench/fast_bank.cpp as the bank (bench/report.py's
`stack()`). Each consumer is started once, on its own fresh queue and table (ready time: spawn to
its own "started" log line), and runs for the whole comparison (an idle one long-polls its empty
queue). Before its first measured drain, a warm-up drain of --warmup charges sent while it runs
(JIT, imports, connection pools). A measured drain: the consumer is paused (SIGSTOP to its
process group), --charges fresh charges are pre-filled with `charge-recovery send`, and it is
resumed (SIGCONT); from there until the bank has every debit and the queue is empty. Over the
drain only: the process group's utime+stime (/proc, as report.py's group_cpu_seconds: JIT and GC
threads included), charges/s, and the emulators' and bank's CPU beside it; after it, peak RSS
(VmHWM) and the bank's ledger: one debit per charge, no repeated debit call, one notification
each. The consumers' drains alternate, --rounds times (the emulators keep warming up), and the
table takes the best of each consumer's drains.

    .venv/bin/python -m bench.compare.run [--charges 2000] [--warmup 6000] [--rounds 2]
        [--consumers ours powertools spring] [--build-dir build/release]

Needs the release build (`make release-build`: charge-recovery, ic_bench_fast_bank), the
Powertools venv and the Spring jar: `make bench-compare` installs both and runs this. Writes
build/bench/compare/report.md and results.json; logs under build/bench/logs/compare/.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    from bench.measure import depth, group_cpu_seconds, status_kb
    from bench.stack import OUT, CpuBudget, Stack, stack
    from tools.local_stack import ManagedProcess, ProcessFailed, wait_until
    from tools.local_stack.charge_recovery import image_environment
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
LABELS = {"ours": "ours (C++ `charge-recovery run`)", "powertools": "Python boto3 + Powertools idempotency",
          "spring": "Spring Boot 3.5 + Spring Cloud AWS 3.4"}


@dataclass
class Started:
    process: ManagedProcess
    ready_seconds: float


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


def start(st: Stack, kind: str, env: dict[str, str], name: str, args: argparse.Namespace) -> Started:
    """Spawn one consumer of `kind` on the queue and table in `env`; ready time is spawn to the
    consumer's own "started" line (polled every 5 ms)."""
    bank = {"CORE_BANKING_URL": st.bank_url, "NOTIFICATION_URL": st.bank_url, "WORKERS": str(args.workers)}
    if kind == "ours":
        argv = [str(st.build / "src/app/charge-recovery"), "run"]
        child_env = {**env, **bank, "ADMIN_ADDR": "127.0.0.1:0", "LOG_LEVEL": "info", **image_environment()}
        stream, pattern = "stderr", '"msg":"consumer started"'
    elif kind == "powertools":
        argv = [str(args.powertools_python), str(POWERTOOLS_CONSUMER)]
        child_env = {**env, **bank, "POWERTOOLS_IDEMPOTENCY_TABLE": powertools_table(st), "LOG_LEVEL": "INFO"}
        stream, pattern = "stdout", '"consumer started"'
    else:
        argv = [args.java, *args.jvm_option, "-jar", str(args.spring_jar)]
        child_env = {**env, **bank, "ADMIN_PORT": "0", "ADMIN_HOST": "127.0.0.1", "MAX_MESSAGES_PER_POLL": str(min(10, args.workers))}
        stream, pattern = "stdout", r"Started ChargeConsumerApplication in"
    t0 = time.monotonic()
    proc = st.manager.start(name, argv, env=child_env)
    regex = re.compile(pattern)
    try:
        while not any(regex.search(line) for line in proc.lines(stream)):
            if not proc.alive() or time.monotonic() - t0 > 180:
                raise ProcessFailed(f"{name}: no {stream} line {pattern!r} (exit status {proc.returncode})\n{proc.log_tail()}")
            time.sleep(0.005)
    except BaseException:
        st.manager.stop(proc)
        raise
    ready = time.monotonic()
    return Started(proc, ready - t0)


def drained(st: Stack, env: dict[str, str], debits: int, timeout: float = 1800) -> None:
    sqs = st.sqs()
    wait_until(lambda: st.bank_stats()["debits"] >= debits and depth(sqs, env["CHARGE_QUEUE_URL"]) == 0,
               timeout=timeout, interval=0.05, description="drained")


@dataclass
class Running:
    kind: str
    env: dict[str, str]  # its own queue and table
    started: Started


def launch(st: Stack, kind: str, args: argparse.Namespace) -> Running:
    env = st.provision()
    return Running(kind, env, start(st, kind, env, kind, args))


def warm_up(st: Stack, c: Running, n: int) -> None:
    debits0 = st.bank_stats()["debits"]
    st.send(c.env, n, 0.0, f"WARM-{uuid.uuid4().hex[:6]}")
    drained(st, c.env, debits0 + n)


def measured_drain(st: Stack, c: Running, n: int, round_no: int, prefix: str | None = None) -> dict[str, Any]:
    """Paused while its queue is filled, so the drain starts from a full queue, as report.py's
    does, but with a warm process; a receive in flight when it stopped may take up to 10
    messages then, which it handles after the resume, inside the measured drain. With `prefix`
    of an earlier drain, the same charges again: all duplicates of finished ones (no debit)."""
    pid = c.started.process.pid
    duplicates = prefix is not None
    prefix = prefix or f"CHG{round_no}-{uuid.uuid4().hex[:6]}"
    os.killpg(pid, signal.SIGSTOP)
    try:
        stats0 = st.bank_stats()
        st.send(c.env, n, 0.0, prefix)
    finally:
        cpu0 = group_cpu_seconds(pid)
        budget = CpuBudget(st)
        t0 = time.monotonic()
        os.killpg(pid, signal.SIGCONT)
    drained(st, c.env, stats0["debits"] + (0 if duplicates else n))
    seconds = time.monotonic() - t0
    cpu = group_cpu_seconds(pid) - cpu0
    servers = budget.per_message(cpu, n)
    stats = st.bank_stats()
    pids = group_pids(pid)
    r: dict[str, Any] = {
        "consumer": c.kind, "round": round_no, "charges": n, "prefix": prefix, "duplicates": duplicates,
        "readySeconds": c.started.ready_seconds,
        "seconds": seconds, "chargesPerSecond": n / seconds, "cpuMsPerCharge": 1000 * cpu / n,
        "serversMsPerCharge": {role: v for role, v in servers["cpuMsPerMessage"].items() if role != "client"},
        "coresBusy": servers["coresBusy"],
        "peakRssMiB": max(status_kb(p, "VmHWM") for p in pids) / 1024, "threads": sum(status_kb(p, "Threads") for p in pids),
        "debits": stats["debits"] - stats0["debits"], "replays": stats["replays"] - stats0["replays"],
        "notifications": stats["notifications"] - stats0["notifications"]}
    expected = 0 if duplicates else n
    r["exactlyOnce"] = r["debits"] == expected and r["replays"] == 0 and r["notifications"] == expected
    return r


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


def best(drains: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [d for d in drains if "error" not in d]
    if not ok:
        return {"error": drains[-1]["error"]}
    return {"chargesPerSecond": max(d["chargesPerSecond"] for d in ok), "cpuMsPerCharge": min(d["cpuMsPerCharge"] for d in ok),
            "peakRssMiB": max(d["peakRssMiB"] for d in ok), "readySeconds": min(d["readySeconds"] for d in ok),
            "serversMsPerCharge": min(sum(d["serversMsPerCharge"].values()) for d in ok),
            "exactlyOnce": all(d["exactlyOnce"] for d in ok), "drains": len(ok), "failedDrains": len(drains) - len(ok)}


def markdown(results: dict[str, Any]) -> str:
    rows = results["best"]
    ours = rows.get("ours", {}).get("cpuMsPerCharge")
    java = f" (Spring on {results['java']})" if results.get("java") else ""
    lines = [f"**`{results['command']}`, {results['when']}**, {results['machine']}; ElasticMQ + dynalite and the fast bank; "
             f"{results['charges']} fresh charges per drain, each consumer warmed up with {results['warmup']} first; "
             f"{results['rounds']} rounds, best of each{java} ({results['wallSeconds']:.0f} s):", "",
             "| consumer | charges/s | CPU ms/charge | ratio to ours | CPU ms/duplicate | peak RSS MiB | ready s | "
             "emulators + bank ms/charge | one debit per charge |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for kind in results["consumers"]:
        b = rows[kind]
        if "error" in b:
            lines.append(f"| {LABELS[kind]} | {b['error']} | | | | | | | |")
            continue
        ratio = f"{b['cpuMsPerCharge'] / ours:.1f}×" if ours else "–"
        dup = f"{b['cpuMsPerDuplicate']:.3f}" if "cpuMsPerDuplicate" in b else "–"
        lines.append(f"| {LABELS[kind]} | {b['chargesPerSecond']:.0f} | {b['cpuMsPerCharge']:.3f} | {ratio} | {dup} | {b['peakRssMiB']:.1f} | "
                     f"{b['readySeconds']:.2f} | {b['serversMsPerCharge']:.2f} | {'yes' if b['exactlyOnce'] else 'NO'} |")
    lines += ["", "Every drain, in the order run (\"dup\": the last drain's charges again, all duplicates):", "",
              "| round | consumer | charges/s | CPU ms/charge | peak RSS MiB | threads | cores busy | debits / replays / notifications |",
              "|---|---|---:|---:|---:|---:|---:|---|"]
    for d in results["drains"] + results["duplicateDrains"]:
        label = "dup" if d.get("duplicates") else str(d["round"])
        if "error" in d:
            lines.append(f"| {label} | {d['consumer']} | {d['error']} | | | | | |")
            continue
        lines.append(f"| {label} | {d['consumer']} | {d['chargesPerSecond']:.0f} | {d['cpuMsPerCharge']:.3f} | {d['peakRssMiB']:.1f} | "
                     f"{d['threads']} | {d['coresBusy']:.2f} | {d['debits']} / {d['replays']} / {d['notifications']} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--charges", type=int, default=2000, help="fresh charges per measured drain (default 2000)")
    # The JVM's JIT keeps improving the Spring consumer for about 6,000-8,000 charges (5.1 ms per
    # charge in its first measured drain of 2,000 after a warm-up of 2,000, 3.9 ms from its
    # fourth): the warm-up takes it most of the way, the rounds after it the rest.
    parser.add_argument("--warmup", type=int, default=6000, help="charges of each consumer's warm-up drain (default 6000)")
    parser.add_argument("--rounds", type=int, default=2, help="times the consumers' drains alternate (default 2)")
    parser.add_argument("--workers", type=int, default=32)
    parser.add_argument("--no-duplicates", dest="duplicates", action="store_false",
                        help="skip the last drain: the same charges again, all duplicates of finished ones")
    parser.add_argument("--consumers", nargs="+", choices=CONSUMERS, default=list(CONSUMERS))
    parser.add_argument("--build-dir", type=Path, default=REPO_ROOT / "build" / "release")
    parser.add_argument("--powertools-python", type=Path, default=POWERTOOLS_PYTHON)
    parser.add_argument("--spring-jar", type=Path, default=SPRING_JAR)
    parser.add_argument("--java", default="java", help="the JVM that runs the Spring jar (default: java on PATH)")
    parser.add_argument("--jvm-option", action="append", default=[], help="an option for that JVM (repeatable; default none)")
    args = parser.parse_args()
    missing = [str(p) for p, kind in ((args.build_dir / "src/app/charge-recovery", "ours"), (args.build_dir / "bench/ic_bench_fast_bank", "ours"),
                                      (args.powertools_python, "powertools"), (args.spring_jar, "spring"))
               if (kind == "ours" or kind in args.consumers) and not p.exists()]
    if missing:
        raise SystemExit(f"missing {', '.join(missing)}: `make bench-compare` builds and installs them")
    COMPARE_OUT.mkdir(parents=True, exist_ok=True)
    t_start = time.monotonic()
    java_version = ""
    if "spring" in args.consumers:
        import subprocess

        java_version = subprocess.run([args.java, "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    results: dict[str, Any] = {
        "command": " ".join(["python -m bench.compare.run", *sys.argv[1:]]), "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start", "build": str(args.build_dir),
        "charges": args.charges, "warmup": args.warmup, "rounds": args.rounds, "workers": args.workers,
        "consumers": args.consumers, "java": java_version, "drains": [], "duplicateDrains": [],
    }
    with stack("compare", "elasticmq", "dynalite", args.build_dir) as st:
        # All three run for the whole comparison, each on its own queue and table (an idle one
        # long-polls its empty queue); each is warmed up just before its first measured drain.
        running: dict[str, Running] = {}
        for kind in args.consumers:
            print(f"== starting {kind}", flush=True)
            try:
                running[kind] = launch(st, kind, args)
            except Exception as e:
                results["drains"].append({"consumer": kind, "round": 0, "error": f"start failed: {type(e).__name__}: {str(e)[:300]}"})
        for round_no in range(1, args.rounds + 1):
            for kind, c in running.items():
                print(f"== round {round_no}: {kind}", flush=True)
                try:
                    if round_no == 1 and args.warmup:
                        warm_up(st, c, args.warmup)
                    d = measured_drain(st, c, args.charges, round_no)
                except Exception as e:  # one consumer failing must not lose the others' figures
                    d = {"consumer": kind, "round": round_no, "error": f"failed: {type(e).__name__}: {str(e)[:300]}"}
                results["drains"].append(d)
                print(json.dumps(d), flush=True)
        # Then the last drain's charges once more: every message a duplicate of a finished
        # charge, to be acknowledged without a debit.
        for kind, c in running.items():
            last = [d for d in results["drains"] if d["consumer"] == kind and "prefix" in d]
            if not last or not args.duplicates:
                continue
            print(f"== duplicates: {kind}", flush=True)
            try:
                d = measured_drain(st, c, args.charges, 0, prefix=last[-1]["prefix"])
            except Exception as e:
                d = {"consumer": kind, "round": 0, "duplicates": True, "error": f"failed: {type(e).__name__}: {str(e)[:300]}"}
            results["duplicateDrains"].append(d)
            print(json.dumps(d), flush=True)
    results["best"] = {kind: best([d for d in results["drains"] if d["consumer"] == kind]) for kind in args.consumers}
    for d in results["duplicateDrains"]:
        if "error" not in d:
            results["best"][d["consumer"]]["cpuMsPerDuplicate"] = d["cpuMsPerCharge"]
    results["wallSeconds"] = time.monotonic() - t_start
    results["machine"] += f", {os.getloadavg()[0]:.1f} at the end"
    (COMPARE_OUT / "results.json").write_text(json.dumps(results, indent=2))
    (COMPARE_OUT / "report.md").write_text(markdown(results))
    print((COMPARE_OUT / "report.md").read_text())
    failed = any("error" in d or not d["exactlyOnce"] for d in results["drains"] + results["duplicateDrains"])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
