"""Consumer drains: one `charge-recovery run` (WORKERS=32, LOG_LEVEL=info, the image's
environment) draining fresh charges pre-filled in a fresh queue, then the same charges again
as duplicates of DONE records, an idle stretch and SIGTERM; and a stack's row of the report's
first table, those drains set against the backend ceiling. The other runs build on
consumer_run (the latency-injected run, scaling, memory)."""

from __future__ import annotations

import time
import urllib.request
import uuid
from typing import Any

from bench.measure import cpu_seconds, depth, memory_breakdown, requests_by_operation, status_kb
from bench.runs import ceiling
from bench.stack import FAST_AWS, CpuBudget, Stack, drain
from tools.local_stack import wait_until

# Consumer drains and ceiling runs that alternate after the first consumer run (full report).
FAIR_REPEATS = 2


def consumer_run(st: Stack, n: int, *, workers: int = 32, processes: int = 1, duplicates: bool = True,
                 idle_seconds: float = 0.0, env_overrides: dict[str, str] | None = None, bank_url: str | None = None,
                 prefix: str | None = None) -> dict[str, Any]:
    """Pre-fill n fresh charges, drain with `processes` consumers; optionally re-send them all
    as duplicates and drain again, then idle and stop. `env_overrides` and `bank_url` point the
    consumers (not the set-up) elsewhere, e.g. through the latency run's delay proxies."""
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


def stack_row(st: Stack, n: int, smoke: bool) -> dict[str, Any]:
    """The stack's row of the first table: its ceiling runs and the consumer's drains.

    Warm-up first (the JVM's JIT, dynalite's, connection pools): not reported. The emulators
    keep warming after it, so the full report alternates further ceiling runs with consumer
    drains, equally often, and the fastest of each counts: one consumer drain set against the
    fastest of four ceiling runs would favour the ceiling. (The smoke skips them: CI has no time
    to spare.) fast_aws has no JIT to warm, and its smoke drain is a sanity check: no warm-up,
    no idle stretch."""
    row: dict[str, Any] = {}
    if st.label != FAST_AWS:
        ceiling.ceiling(st, min(n, 200 if smoke else 1000), *ceiling.ALTERNATING)
    row["ceilingRuns"] = [ceiling.ceiling(st, n, r, w) for r, w in (ceiling.SMOKE_SIZES if smoke else ceiling.SIZES)]
    row["consumer"] = consumer_run(st, n, idle_seconds=30 if not smoke else 0 if st.label == FAST_AWS else 5)
    drains = [row["consumer"]["chargesPerSecond"]]
    if not smoke:
        row["ceilingAfter"] = []
        for _ in range(FAIR_REPEATS):
            drains.append(consumer_run(st, n, duplicates=False)["chargesPerSecond"])
            row["ceilingAfter"].append(ceiling.ceiling(st, n, *ceiling.ALTERNATING))
    row["consumerDrains"] = drains
    row["consumerBest"] = max(drains)
    row["ceiling"] = max([*row["ceilingRuns"], *row.get("ceilingAfter", [])], key=lambda run: run["messagesPerSecond"])
    return row


def ready_and_busy_stop(st: Stack, n: int) -> dict[str, Any]:
    """Start-to-ready on an empty queue, and SIGTERM-to-exit while a backlog is being processed."""
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
