#!/usr/bin/env python3
"""End-to-end throughput of one consumer on the local stack (a measurement, not a test).

Starts moto and the fake bank, provisions, starts one `charge-recovery run`, publishes
--charges charges plus --duplicate-rate re-sends with `charge-recovery send` and waits until
the queue is empty. The consumer runs while `send` publishes, as in production, and `send` runs
in chunks of --chunk charges, each once the queue is nearly empty: moto's SQS slows down with
queue depth (a pre-filled queue of 13,000 messages did not drain in 40 minutes: receives and
sends took seconds each), so a deep queue would measure moto, not us. Reports messages/s from the first send to the drain and
the CPU seconds of `send` and of the consumer (utime + stime), plus the ledger's verdict.

    .venv/bin/python -m bench.consumer_throughput --charges 10000 --duplicate-rate 0.3

Run as a module from the repository root (it uses the release build: `make bench` builds it)
so that the local-stack package (tools/local_stack) imports like any package.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

try:
    from bench.measure import cpu_seconds, depth
    from tools.local_stack import ProcessManager, binary_path, line_matching, start_fake_bank, start_moto, wait_until
    from tools.local_stack.paths import REPO_ROOT as REPO
except ModuleNotFoundError as e:  # run by path: sys.path[0] is bench/, not the root
    if e.name not in ("tools", "bench"):
        raise
    raise SystemExit("run it from the repository root as `.venv/bin/python -m bench.consumer_throughput`") from e


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--charges", type=int, default=10_000)
    parser.add_argument("--duplicate-rate", type=float, default=0.3)
    parser.add_argument("--workers", type=int, default=32)
    parser.add_argument("--chunk", type=int, default=500)
    parser.add_argument("--build-dir", default=str(REPO / "build" / "release"))
    args = parser.parse_args()
    binary = binary_path(Path(args.build_dir))
    manager = ProcessManager(REPO / ".demo" / "bench-logs")
    try:
        moto = start_moto(manager)
        bank = start_fake_bank(manager)
        env = {**os.environ, **moto.env(), "LOG_LEVEL": "warn"}
        out = subprocess.run([str(binary), "provision", "--table", "bench"], env=env,
                             check=True, capture_output=True, text=True).stdout
        env.update(line.split("=", 1) for line in out.split())
        env.update(CORE_BANKING_URL=bank.url, NOTIFICATION_URL=bank.url,
                   WORKERS=str(args.workers), ADMIN_ADDR="127.0.0.1:0", LOG_LEVEL="info")
        consumer = manager.start("consumer", [str(binary), "run"], env=env,
                                 ready=line_matching('"msg":"consumer started"', "stderr"))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        sqs = moto.sqs()
        t0 = time.monotonic()
        sent = Counter()
        for first in range(0, args.charges, args.chunk):
            wait_until(lambda: depth(sqs, env["CHARGE_QUEUE_URL"]) < args.chunk // 5,
                       timeout=600, interval=0.2, description="queue nearly drained")
            count = min(args.chunk, args.charges - first)
            summary = json.loads(subprocess.run(
                [str(binary), "send", "--count", str(count), "--duplicate-rate",
                 str(args.duplicate_rate), "--seed", str(first), "--id-prefix",
                 f"CHG-{first:06d}"], env=env, check=True, capture_output=True,
                text=True).stdout)
            sent.update({k: v for k, v in summary.items() if k != "event"})
        send_wall = time.monotonic() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        send_cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        wait_until(lambda: depth(sqs, env["CHARGE_QUEUE_URL"]) == 0, timeout=3600,
                   interval=0.5, description="queue drained")
        drain_wall = time.monotonic() - t0
        consumer_cpu = cpu_seconds(consumer.pid)
        ledger = bank.ledger()
        per_charge = Counter(d["chargeId"] for d in ledger["debits"])
        report = {
            "messages": sent["messages"], "uniqueCharges": sent["unique"],
            "workers": args.workers,
            "chunk": args.chunk,
            "sendSeconds": round(send_wall, 2), "sendCpuSeconds": round(send_cpu, 2),
            "drainSeconds": round(drain_wall, 2),
            "messagesPerSecond": round(sent["messages"] / drain_wall, 1),
            "consumerCpuSeconds": round(consumer_cpu, 2),
            "consumerCpuMsPerMessage": round(1000 * consumer_cpu / sent["messages"], 3),
            "chargesDebited": len(per_charge),
            "doubleDebits": sum(1 for n in per_charge.values() if n > 1),
        }
        print(json.dumps(report, indent=2))
        return 0 if report["doubleDebits"] == 0 and len(per_charge) == args.charges else 1
    finally:
        manager.stop_all(grace=30)


if __name__ == "__main__":
    sys.exit(main())
