"""The bank-horizon scenario (issue 35, docs/design.md §3 "The bank's memory of keys"): first
debits commit and then answer past our timeout, then the bank is down (503 to every call) for
longer than its short memory of keys. A retry of a committed debit is asked about first
(BANK_STATUS_INQUIRY); past the window it is never sent again but ends DEBIT_UNCERTAIN, which
`reconcile --resolve-uncertain` settles from the bank's ledger after the drain (debited: DONE;
not debited: reopened, and redriven for a fresh debit).

Checkers: C1 (no double debit: a replay the bank no longer remembers is a second ledger row)
and C2 (nothing lost) as every scenario; CH: the run left DEBIT_UNCERTAIN charges only for
reconcile to resolve, and it resolved every one (none is left after the redrive).
"""

from __future__ import annotations

import os
import subprocess
import time
from typing import Any

from tools.chaos.checkers import CheckResult, Run
from tools.chaos.history import History
from tools.chaos.nemesis import ACTIONS, BANK_TIMEOUT_S, Nemesis, Step
from tools.chaos.stack import ChaosStack
from tools.local_stack import binary

KEY_MEMORY_MS = 20_000  # the fake bank forgets a key this long after its debit
WINDOW = "15s"  # BANK_IDEMPOTENCY_WINDOW: the bank's memory less a margin
COMMIT_THEN_TIMEOUT_S = 3.0
OUTAGE_S = 30.0  # longer than the bank's memory


def bank_horizon(n: Nemesis, step: Step) -> None:
    """Every debit commits and answers past the timeout for COMMIT_THEN_TIMEOUT_S, then (after
    `params["gap"]` seconds) every call is a 503 for `seconds`; the key memory stays on."""
    memory = {"keyMemoryMs": KEY_MEMORY_MS}
    hang = {**memory, "commitThenTimeout": {"rate": 1.0, "mode": "delay", "delayMs": int((BANK_TIMEOUT_S + 2) * 1000)}}
    n.bank(hang)
    n.mark(step.fault, "start", seconds=COMMIT_THEN_TIMEOUT_S, faults=hang)
    time.sleep(COMMIT_THEN_TIMEOUT_S)
    n.bank(memory)
    time.sleep(step.params.get("gap", 0.0))
    down = {**memory, "transientErrorRate": 1.0}
    n.bank(down)
    n.mark(step.fault, "outage", seconds=step.seconds, faults=down)
    try:
        time.sleep(step.seconds)
    finally:
        n.bank(memory)
        n.mark(step.fault, "stop")


# Registered with the nemesis here, so the shared scenario table only names the scenario.
ACTIONS["bank-horizon"] = bank_horizon


def _cli(stack: ChaosStack, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **stack.consumer_env(stack.slots[-1]), "LD_PRELOAD": "", "FAKETIME": ""}
    return subprocess.run([str(binary()), *args], input=stdin, env=env, capture_output=True, text=True,
                          timeout=120, check=False)


def resolve_after_drain(stack: ChaosStack, history: History) -> None:
    """reconcile --resolve-uncertain against the bank's export, then redrive the DEBIT_UNCERTAIN
    dead letters and wait for the source queue to drain again."""
    uncertain = sorted(k for k, r in stack.records().items() if r.get("status") == "DEBIT_UNCERTAIN")
    resolved = _cli(stack, "reconcile", "--resolve-uncertain", "--ledger", "-", "--actor", "chaos",
                    stdin=stack.bank.ledger_csv())
    lines = [line for line in resolved.stdout.splitlines() if line.startswith("{")]
    history.add("resolve", uncertain=uncertain, exitCode=resolved.returncode, summary=lines[-1] if lines else None,
                stderr=resolved.stderr[-300:])
    redriven = _cli(stack, "redrive", "--reason", "DEBIT_UNCERTAIN")
    history.add("resolve_redrive", exitCode=redriven.returncode, output=redriven.stdout.strip()[-200:])
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and stack.depth(stack.queue_url) != 0:
        time.sleep(0.25)


def ch_uncertain_resolved(run: Run) -> CheckResult:
    resolves = run.of_type("resolve")
    if not resolves:
        return CheckResult("CH", False, "reconcile --resolve-uncertain did not run")
    uncertain = resolves[-1].get("uncertain", [])
    left = sorted(k for k, r in run.records.items() if r.get("status") == "DEBIT_UNCERTAIN")
    problems = []
    if resolves[-1].get("exitCode") != 0:
        problems.append(f"reconcile exited {resolves[-1].get('exitCode')}: {resolves[-1].get('stderr')}")
    if left:
        problems.append(f"still DEBIT_UNCERTAIN: {left[:5]}")
    detail = f"{len(uncertain)} DEBIT_UNCERTAIN after the drain, resolved: {resolves[-1].get('summary')}"
    counts = {"uncertain": len(uncertain), "left": len(left)}
    if problems:
        return CheckResult("CH", False, f"{'; '.join(problems)}; {detail}", counts=counts)
    return CheckResult("CH", True, detail, counts=counts)


def scenario(outage_spec: dict[str, Any]) -> dict[str, Any]:
    """The scenario table's entry: the commit-then-timeout window at 1 s, the outage 10 s later
    (after the first retries asked the bank), the inquiry on and a window the outage outlasts."""
    env = {**outage_spec["env"], "BANK_STATUS_INQUIRY": "true", "BANK_IDEMPOTENCY_WINDOW": WINDOW}
    return {**outage_spec, "env": env, "maxReceiveCount": 10,
            "steps": [Step(1, "bank-horizon", OUTAGE_S, {"gap": 10.0})],
            "afterDrain": resolve_after_drain, "checks": [ch_uncertain_resolved]}
