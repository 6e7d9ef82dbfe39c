"""The ceilings the consumer's rate is set against: bench/backend_ceiling.cpp draining a
pre-filled queue with the consumer's request shapes (receive 10, claim, complete, delete batch)
and nothing else, through the consumer's own C++ clients, at growing concurrency; and the bench
bank's own rate, so it is known not to be the limit."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import threading
import time
from typing import Any

from bench.measure import children_cpu_seconds
from bench.stack import CpuBudget, Stack

# (receivers, workers) of the ceiling runs: the consumer's own at WORKERS=32, then twice and
# four times that. The smoke run measures only the middle one, which is also the size that
# alternates with the consumer's drains and warms the emulators up.
SIZES = [(2, 32), (4, 64), (8, 128)]
SMOKE_SIZES = [(4, 64)]
ALTERNATING = SMOKE_SIZES[0]


def ceiling(st: Stack, n: int, receivers: int, workers: int) -> dict[str, Any]:
    """One run of n fresh messages: messages/s, errors, and the CPU per message of every process."""
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


def bank_ceiling(st: Stack, seconds: float = 3.0, threads: int = 16) -> float:
    """Requests/s the fast bank answers to Python keep-alive clients (a lower bound: the
    clients, not the bank, are likely the limit)."""
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
