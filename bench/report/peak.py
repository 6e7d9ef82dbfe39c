"""The report's section on the peak run, plain and over TLS (bench/runs/peak.py)."""

from __future__ import annotations

from typing import Any


def verdict(peak: dict[str, Any]) -> str:
    target = peak["targetPerSecond"]
    misses = [what for what, ok in (("debits", peak["steadyDebitsPerSecond"] >= 0.98 * target),
                                    ("acks", peak["steadyAcksPerSecond"] >= 0.98 * target),
                                    ("cores", peak["steadyCores"] <= peak["targetCores"]),
                                    ("RSS", peak["peakRssMiB"] <= peak["targetRssMiB"])) if not ok]
    return "met" if not misses else "not met: " + ", ".join(misses)


def limit_text(peak: dict[str, Any]) -> str:
    if "bankLimitMin" not in peak:
        return "—"
    return f"{peak['bankLimitMin']:.0f}, {peak['bankLimitEnd']:.0f}"


def lines(peaks: list[dict[str, Any]] | None, backend: str) -> list[str]:
    if not peaks:
        return []
    measured = [peak for peak in peaks if "error" not in peak]
    failed = [f"- {'TLS' if peak['tls'] else 'plain'}: failed: {peak['error']}" for peak in peaks if "error" in peak]
    if not measured:
        return ["", "Peak run (bench/runs/peak.py):", "", *failed]
    p = measured[0]
    out = ["", f"Peak run (bench/runs/peak.py, {backend}): {p['targetPerSecond']:,} charges/s offered for {p['seconds']:.0f} s "
           f"({p['charges']:,} charges, `charge-recovery send` every {p['chunkSeconds']} s) to one consumer at "
           f"WORKERS={p['workers']:,}; SQS and DynamoDB {p['awsMs']:.0f} ms, the bank {p['bank']} (2% of each at three or four "
           f"times that) through bench/net_proxy.cpp, plain or terminating TLS (the bank's with client certificates); the model "
           f"(L = {p['modelLatencyMs']:.0f} ms) needs {p['workersNeeded']} in flight:", "",
           "| network | offered charges/s | steady: debits/s | steady: acks/s | steady: consumer cores | overall charges/s | max backlog "
           "| debits done, s after the last send | queue empty, s after | CPU ms/charge (user + kernel) | peak RSS MiB | threads "
           "| bank concurrency limit: lowest, last | TLS handshakes | target (steady debits and acks ≥ 98 % of the rate, cores, RSS) |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for peak in measured:
        handshakes = " / ".join(f"{role} {count}" for role, count in peak["handshakes"].items()) if peak["tls"] else "—"
        out.append(f"| {'TLS' if peak['tls'] else 'plain'} | {peak['offeredPerSecond']:,.0f} | {peak['steadyDebitsPerSecond']:,.0f} "
                   f"| {peak['steadyAcksPerSecond']:,.0f} | {peak['steadyCores']:.2f} | {peak['overallPerSecond']:,.0f} "
                   f"| {peak['maxBacklog']:,} | {peak['debitLagSeconds']:.1f} | {peak['queueLagSeconds']:.1f} "
                   f"| {peak['cpuMsPerCharge']:.3f} ({peak['userMsPerCharge']:.3f} + {peak['kernelMsPerCharge']:.3f}) "
                   f"| {peak['peakRssMiB']:.1f} | {peak['threads']} | {limit_text(peak)} | {handshakes} "
                   f"| ≤ {peak['targetCores']} cores, ≤ {peak['targetRssMiB']:.0f} MiB: {verdict(peak)} |")
    out += ["", *failed]
    for peak in measured:
        others = ", ".join(f"{role} {cores:.2f}" for role, cores in peak["otherCores"].items())
        busy = peak["consumerCores"] + sum(peak["otherCores"].values())
        out.append(f"- {'TLS' if peak['tls'] else 'plain'}: the bank has {peak['bankDebits']:,} debits for {peak['charges']:,} charges "
                   f"({peak['bankReplays']} replays). Cores over the whole run (first send to an empty queue, {peak['wallSeconds']:.0f} s): "
                   f"the consumer {peak['consumerCores']:.2f}, and on the same two cores {others} ({busy:.2f} busy in all).")
    return out
