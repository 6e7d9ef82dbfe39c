"""The report's section on the latency-injected run (bench/runs/latency.py)."""

from __future__ import annotations

from typing import Any


def lines(latency: dict[str, Any] | None, backend: str) -> list[str]:
    if not latency or not latency["rows"]:
        return []
    aws = latency["aws"]
    out = ["", f"Latency-injected run (bench/runs/latency.py, {backend}): AWS {aws['ms']:.0f} ms ({aws['tailFraction']:.0%} at "
           f"{aws['tailMs']:.0f} ms), the bank as listed (2% at three times that); the model is in-flight ÷ "
           f"({latency['awsCalls']} AWS + {latency['bankCalls']} bank mean latencies):", "",
           "| bank | in flight | charges | model charges/s | measured charges/s | measured / model | CPU ms/charge | peak RSS MiB | threads |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    out += [f"| {r['bank']} | {r['inFlight']} | {r['charges']} | {r['predictedPerSecond']:.0f} | {r['chargesPerSecond']:.0f} "
            f"| {r['chargesPerSecond'] / r['predictedPerSecond']:.2f} | {r['cpuMsPerCharge']:.3f} | {r['peakRssMiB']:.1f} | {r['threads']} |"
            for r in latency["rows"]]
    return out
