"""Faults and their schedule. A fault is either a window (on at `at`, off `seconds` later) or an
instant action; every change is a `fault` event in the history. Times are seconds from the
start of the workload.

Durations scale with the lease: the issue's 30 s store pause is for the default 60 s lease; at
the suite's short lease a pause of 2 leases + 2 s has the same effect (every claim and every
visibility timeout in flight expires during the pause) and keeps the run short.
"""

from __future__ import annotations

import random
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tools.chaos.history import History
from tools.chaos.stack import ChaosStack
from tools.chaos.stalls import stall
from tools.chaos.workload import REFUSED_ACCOUNT
from tools.local_stack import binary
from tools.local_stack.aws_proxy import Faults

BASE_FAULTS: dict[str, Any] = {"permanentFailures": {REFUSED_ACCOUNT: "ACCOUNT_CLOSED"}}
BANK_TIMEOUT_S = 10.0  # the bank adapter's total timeout (docs/design.md §5)


@dataclass
class Step:
    at: float
    fault: str
    seconds: float = 0.0
    params: dict[str, Any] = field(default_factory=dict)


class Nemesis:
    """Runs a schedule of Steps against a stack on its own thread."""

    def __init__(self, stack: ChaosStack, history: History, steps: list[Step], rng: random.Random) -> None:
        self.stack = stack
        self.history = history
        self.steps = sorted(steps, key=lambda s: s.at)
        self.rng = rng
        self.errors: list[BaseException] = []
        self.last_fault_end = 0.0
        self._thread = threading.Thread(target=self._run, name="nemesis", daemon=True)
        self._start = 0.0

    def start(self, t0: float) -> None:
        self._start = t0
        self._thread.start()

    def join(self) -> None:
        self._thread.join()

    def _sleep_until(self, offset: float) -> None:
        delay = self._start + offset - time.monotonic()
        if delay > 0:
            time.sleep(delay)

    def _run(self) -> None:
        workers = []
        for step in self.steps:
            self._sleep_until(step.at)
            action = ACTIONS[step.fault]
            worker = threading.Thread(target=self._apply, args=(action, step), daemon=True)
            worker.start()
            workers.append(worker)
        for worker in workers:
            worker.join()

    def _apply(self, action: Callable[[Nemesis, Step], None], step: Step) -> None:
        try:
            action(self, step)
        except BaseException as e:  # reported by the runner; the run's checkers still run
            self.errors.append(e)
            self.history.add("fault", fault=step.fault, action="error", error=repr(e))
        finally:
            self.last_fault_end = max(self.last_fault_end, time.time())

    def mark(self, fault: str, action: str, **fields: Any) -> None:
        self.history.add("fault", fault=fault, action=action, **fields)

    def bank(self, faults: dict[str, Any]) -> None:
        self.stack.bank.set_faults({**BASE_FAULTS, **faults})


def store_pause(n: Nemesis, step: Step) -> None:
    n.mark(step.fault, "start", seconds=step.seconds)
    n.stack.pause_store()
    try:
        time.sleep(step.seconds)
    finally:
        n.stack.resume_store()
        n.mark(step.fault, "stop")


def store_restart(n: Nemesis, step: Step) -> None:
    n.mark(step.fault, "start")
    n.mark(step.fault, "wipe")
    n.stack.restart_dynamodb()
    n.mark(step.fault, "stop")


def consumer_pause(n: Nemesis, step: Step) -> None:
    slot = n.stack.slots[0]
    n.mark(step.fault, "start", consumer=slot.name, seconds=step.seconds)
    n.stack.signal(slot, signal.SIGSTOP)
    try:
        time.sleep(step.seconds)
    finally:
        n.stack.signal(slot, signal.SIGCONT)
        n.mark(step.fault, "stop", consumer=slot.name)


def consumer_kill(n: Nemesis, step: Step) -> None:
    n.mark(step.fault, "start", seconds=step.seconds)
    end = time.monotonic() + step.seconds
    every = step.params.get("every", 3.0)
    while time.monotonic() < end:
        slot = n.rng.choice(n.stack.slots)
        killed_at = time.time()
        killed = n.stack.kill_and_restart(slot)
        n.history.add("fault", t=killed_at, fault=step.fault, action="kill", consumer=killed)
        time.sleep(every)
    n.mark(step.fault, "stop")


def bank_window(faults: dict[str, Any]) -> Callable[[Nemesis, Step], None]:
    def action(n: Nemesis, step: Step) -> None:
        n.bank({**faults, **step.params})
        n.mark(step.fault, "start", seconds=step.seconds, faults={**faults, **step.params})
        try:
            time.sleep(step.seconds)
        finally:
            n.bank({})
            n.mark(step.fault, "stop")

    return action


def store_outage(n: Nemesis, step: Step) -> None:
    """The idempotency store alone unreachable (its proxy refuses every connection, SQS stays
    up) for the window: no record is lost, unlike store-restart."""
    n.mark(step.fault, "start", seconds=step.seconds)
    n.stack.store_proxy_mode("refuse")
    try:
        time.sleep(step.seconds)
    finally:
        n.stack.store_proxy_mode("forward")
        n.mark(step.fault, "stop")


def aws_faults(n: Nemesis, step: Step) -> None:
    """AWS-side faults on the consumers' requests (tools/local_stack/aws_proxy.py's fault mode)
    for the window: params map "sqs" / "dynamodb" to fault fractions."""
    n.mark(step.fault, "start", seconds=step.seconds, faults=step.params)
    for service, fractions in step.params.items():
        n.stack.set_aws_faults(service, Faults(**fractions, seed=n.rng.randrange(2**31)))
    try:
        time.sleep(step.seconds)
    finally:
        for service in step.params:
            n.stack.set_aws_faults(service, Faults())
        n.mark(step.fault, "stop", stats=n.stack.aws_fault_stats())


def commit_then_timeout(n: Nemesis, step: Step) -> None:
    """Half the window answers late (beyond the client's timeout), half drops the connection."""
    half = step.seconds / 2
    for mode in ("delay", "close"):
        faults = {"commitThenTimeout": {"rate": 0.3, "mode": mode, "delayMs": int((BANK_TIMEOUT_S + 2) * 1000)}}
        n.bank(faults)
        n.mark(step.fault, "start", seconds=half, faults=faults)
        time.sleep(half)
    n.bank({})
    n.mark(step.fault, "stop")


def redrive(n: Nemesis, step: Step) -> None:
    """`charge-recovery redrive --max N` mid-run (--max bounds today's redrive, which would
    otherwise keep moving messages dead-lettered again while it runs)."""
    n.mark(step.fault, "start", max=step.params.get("max", 50))
    env = {**n.stack.consumer_env(n.stack.slots[-1]), "LD_PRELOAD": "", "FAKETIME": ""}
    result = subprocess.run([str(binary()), "redrive", "--max", str(step.params.get("max", 50))],
                            env=env, capture_output=True, text=True, timeout=120, check=False)
    n.mark(step.fault, "stop", exitCode=result.returncode, output=result.stdout.strip()[-200:])


ACTIONS: dict[str, Callable[[Nemesis, Step], None]] = {
    "store-pause": store_pause,
    "store-restart": store_restart,
    "consumer-pause": consumer_pause,
    "consumer-kill": consumer_kill,
    "bank-hang": bank_window({"hang": {"rate": 0.2, "delayMs": int((BANK_TIMEOUT_S + 2) * 1000)}}),
    "bank-commit-timeout": commit_then_timeout,
    "bank-503": bank_window({"transientErrorRate": 0.3}),
    "redrive": redrive,
    "aws-faults": aws_faults,
    # Long outages (issue 22); their durations are set per scenario (tools/chaos/runner.py).
    "bank-outage": bank_window({"transientErrorRate": 1.0}),
    "store-outage": store_outage,
    "notify-outage": bank_window({"notificationFailureRate": 1.0}),
    "bank-429": bank_window({"transientErrorRate": 0.3, "transientErrorStatus": 429, "retryAfter": {"seconds": 3}}),
    "bank-slow": bank_window({"latencyMs": 1500}),
    # Stalls (issue 34, tools/chaos/stalls.py): one action, the scenario's Stall decides what stops.
    "credentials-stall": stall,
    "log-stall": stall,
    "resolver-stall": stall,
}

# Fault kinds whose window is an outage of one dependency (the C6-C8 checkers judge them).
OUTAGES = {"bank-outage": "debit", "store-outage": "store", "notify-outage": "notify"}
