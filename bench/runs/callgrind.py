"""Instructions per charge: the consumer under valgrind's callgrind draining a small and a
larger batch of fresh charges; the difference of the two runs' total Ir divided by the
difference in charges, so start-up and shutdown cancel out. (This VM exposes no hardware
counters to `perf stat`.) Instruction counts are the stable figure on a shared machine."""

from __future__ import annotations

from typing import Any

from bench.stack import OUT, Stack, drain


def run(st: Stack, small: int, large: int) -> dict[str, Any]:
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
    return {"instructionsPerCharge": (totals[1] - totals[0]) / (large - small), "runs": f"runs of {small} and {large} charges"}
