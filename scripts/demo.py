#!/usr/bin/env python3
"""`make demo`: the whole proof on the local stack, hermetic and repeatable.

moto (SQS + atomic DynamoDB) and the fake bank start fresh; `charge-recovery provision`
creates table and queues; two consumers run with a short lease so that duplicates, deferrals
and redeliveries really happen (the bank also fails 20% of debits transiently); `send`
publishes 20 charges plus ~30% re-sent as new SQS messages under the same chargeId. When the
queue has drained, the fake bank's ledger and the table are checked: every charge debited
exactly once, every record DONE. Exit status 1 on any violation. Everything started here is
stopped here, and a previous run's leftovers are killed first.

    .venv/bin/python -m scripts.demo        # from the repository root (what `make demo` runs)

Run as a module from the repository root so that the local-stack package (tools/local_stack,
the same process helpers the system tests use) imports like any package.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from collections import Counter
from pathlib import Path

try:
    from tools.local_stack import (
        ManagedProcess,
        ProcessManager,
        binary_path,
        line_matching,
        start_fake_bank,
        start_moto,
        wait_until,
    )
    from tools.local_stack.paths import REPO_ROOT
except ModuleNotFoundError as e:  # run by path: Python imports from scripts/, not the root
    if e.name != "tools":
        raise
    raise SystemExit("demo: run it from the repository root as `.venv/bin/python -m scripts.demo`") from e

STATE = REPO_ROOT / ".demo"
PID_FILE = STATE / "pids"
CHARGES = 20
DUPLICATE_RATE = 0.3
LEASE_SECONDS = 3
DRAIN_TIMEOUT_S = 120


def stop_leftovers() -> None:
    if not PID_FILE.exists():
        return
    for line in PID_FILE.read_text().split():
        try:
            os.killpg(int(line), signal.SIGKILL)
            print(f"demo: stopped leftover process group {line}")
        except (ProcessLookupError, PermissionError, ValueError):
            pass
    PID_FILE.unlink()


def remember(proc: ManagedProcess) -> None:
    with PID_FILE.open("a") as f:
        f.write(f"{proc.pid}\n")


def run_cli(binary: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run([str(binary), *args], env={**os.environ, **env}, capture_output=True,
                          text=True, timeout=120)
    if done.returncode != 0:
        raise SystemExit(f"demo: charge-recovery {args[0]} failed ({done.returncode}):\n"
                         f"{done.stderr}")
    return done.stdout


def reconcile_with_bank(binary: Path, env: dict[str, str], ledger: str) -> dict:
    """`reconcile --full` of the fake bank's export: the summary line (exit 6 is reported as
    the discrepancies it found, anything else stops the demo)."""
    done = subprocess.run([str(binary), "reconcile", "--ledger", "-", "--full"], input=ledger,
                          env={**os.environ, **env}, capture_output=True, text=True, timeout=120)
    if done.returncode not in (0, 6):
        raise SystemExit(f"demo: charge-recovery reconcile failed ({done.returncode}):\n"
                         f"{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])


def queue_depth(sqs, url: str) -> int:
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    return int(attrs["ApproximateNumberOfMessages"]) + int(
        attrs["ApproximateNumberOfMessagesNotVisible"]) + int(
        attrs.get("ApproximateNumberOfMessagesDelayed", "0"))


def metric_sums(admin_ports: list[int], family: str, label: str) -> Counter:
    """Sums one labelled counter family over the consumers' /metrics."""
    totals: Counter = Counter()
    for port in admin_ports:
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read()
        for line in text.decode().splitlines():
            if line.startswith(family + "{"):
                labels, value = line.rsplit(" ", 1)
                for pair in labels[len(family) + 1:-1].split(","):
                    key, _, raw = pair.partition("=")
                    if key == label:
                        totals[raw.strip('"')] += int(float(value))
    return totals


def main() -> int:
    STATE.mkdir(exist_ok=True)
    stop_leftovers()
    binary = binary_path()
    if not binary.exists():
        raise SystemExit(f"demo: {binary} is missing; run `make build`")
    manager = ProcessManager(STATE / "logs")
    violations: list[str] = []
    try:
        moto = start_moto(manager)
        remember(moto.process)
        bank = start_fake_bank(manager, seed=20261130)
        remember(bank.process)
        bank.set_faults(latencyMs=150, transientErrorRate=0.2)
        env = {**moto.env(), "LOG_LEVEL": "info"}
        provisioned = run_cli(binary, env, "provision", "--table", "charge-idempotency",
                              "--lease-seconds", str(LEASE_SECONDS))
        env.update(line.split("=", 1) for line in provisioned.split())
        env.update(CORE_BANKING_URL=bank.url, NOTIFICATION_URL=bank.url, WORKERS="4",
                   LEASE_SECONDS=str(LEASE_SECONDS), ADMIN_ADDR="127.0.0.1:0")

        consumers = []
        for i in (1, 2):
            proc = manager.start(f"consumer-{i}", [str(binary), "run"], env=env,
                                 ready=line_matching(r'"msg":"consumer started"',
                                                     stream="stderr"))
            remember(proc)
            consumers.append(proc)
        admin_ports = [next(e["adminPort"] for e in c.json_lines("stderr")
                            if e.get("msg") == "consumer started") for c in consumers]

        sent = json.loads(run_cli(binary, env, "send", "--count", str(CHARGES),
                                  "--duplicate-rate", str(DUPLICATE_RATE), "--seed", "7",
                                  "--id-prefix", "CHG-DEMO"))
        sqs = moto.sqs()
        wait_until(lambda: queue_depth(sqs, env["CHARGE_QUEUE_URL"]) == 0,
                   timeout=DRAIN_TIMEOUT_S, interval=0.5,
                   description="the charge queue to drain")

        ledger = bank.ledger()
        debits_per_charge = Counter(d["chargeId"] for d in ledger["debits"])
        double = {c: n for c, n in debits_per_charge.items() if n > 1}
        items = moto.dynamodb().scan(TableName=env["IDEMPOTENCY_TABLE"],
                                     ConsistentRead=True)["Items"]
        states = Counter(item["state"]["S"] for item in items)
        dlq_depth = queue_depth(sqs, env["CHARGE_DLQ_URL"])
        outcomes = metric_sums(admin_ports, "ic_claim_outcomes_total", "outcome")
        if len(debits_per_charge) != CHARGES:
            violations.append(f"{len(debits_per_charge)} charges debited, expected {CHARGES}")
        if double:
            violations.append(f"double debits: {double}")
        if states != Counter({"DONE": CHARGES}):
            violations.append(f"record states {dict(states)}, expected {CHARGES} DONE")
        if dlq_depth:
            violations.append(f"{dlq_depth} messages in the DLQ")

        reconciled = reconcile_with_bank(binary, env, bank.ledger_csv())
        if any(reconciled["discrepancies"].values()) or reconciled["matched"] != CHARGES:
            violations.append(f"reconcile against the bank's ledger: {reconciled}")

        summary = {
            "messagesSent": sent["messages"],
            "uniqueCharges": sent["unique"],
            "debits": len(ledger["debits"]),
            "bankReplays": ledger["stats"]["replays"],
            "bankTransientErrorsInjected": ledger["stats"]["transientErrors"],
            "claimOutcomes": dict(sorted(outcomes.items())),
            "duplicatesByOutcome": {k: v for k, v in sorted(outcomes.items()) if k != "ACQUIRED"},
            "recordsDone": states.get("DONE", 0),
            "doubleDebits": len(double),
            "reconciled": reconciled,
            "violations": violations,
        }
        # Both at once: each may sit in a 20 s long poll before it can exit.
        for proc in consumers:
            os.killpg(proc.pid, signal.SIGTERM)
        for proc in consumers:
            code = manager.stop(proc, grace=30)
            if code != 0:
                violations.append(f"{proc.name} exited {code} on SIGTERM")
        print(json.dumps(summary, indent=2))
    finally:
        manager.stop_all()
        PID_FILE.unlink(missing_ok=True)
    print("demo: PASS" if not violations else "demo: FAIL")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
