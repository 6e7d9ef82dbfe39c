"""The report's headline: production's work next to the best case (bench/runs/production.py)."""

from __future__ import annotations

import statistics
from typing import Any

from bench.report.text import min_median

# A system call gets its own row above this many per charge in some variant; the rest are summed.
OWN_ROW = 0.05


def median(drains: list[dict[str, Any]], key: str) -> float:
    return statistics.median(d[key] for d in drains)


def syscalls_per_charge(variant: dict[str, Any], n: int) -> float | None:
    return sum(variant["strace"]["calls"].values()) / n if variant.get("strace") else None


def handshakes_text(drains: list[dict[str, Any]]) -> str:
    roles = list(drains[0]["handshakes"])
    if not roles:
        return "—"
    return " / ".join(f"{role} {statistics.median(d['handshakes'][role] for d in drains):.0f}" for role in roles)


def lines(p: dict[str, Any] | None, backend: str) -> list[str]:
    if not p:
        return []
    n, variants = p["charges"], p["variants"]
    best = next((v for v in variants if v["key"] == "best"), None)
    out = ["## Production's work", "",
           f"bench/runs/production.py on {backend}: {n:,} charges + {p['duplicateRate']:.0%} duplicates ({p['duplicates']:,}) sent into "
           f"a fresh queue before the consumer starts (`charge-recovery send --count {n} --duplicate-rate {p['duplicateRate']}`), "
           f"one consumer, WORKERS={p['workers']}, LOG_LEVEL=info; each variant adds one thing to the one above (the last row is "
           f"TLS with the bench's C++ bank). {p['rounds']} drain(s) per variant, taking turns (min / median); CPU is the consumer's "
           f"utime + stime from its spawn to the empty queue, per charge (start-up included); system calls from one more drain per "
           f"variant under `strace -c -f`. Load average {p['loadAverage']:.1f} at the end.", "",
           "| variant | CPU ms/charge | × best case | user ms | kernel ms | system calls/charge | charges/s | drain s | peak RSS MiB "
           "| TLS handshakes | requests/charge: AWS, bank | rest of the stack ms/charge |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|"]
    for v in variants:
        d = v["drains"]
        ratio = f"{median(d, 'cpuMsPerCharge') / median(best['drains'], 'cpuMsPerCharge'):.2f}" if best else "—"
        calls = syscalls_per_charge(v, n)
        aws = statistics.median(sum(x["requestsPerCharge"].values()) for x in d)
        rest = statistics.median(sum(x["serversMsPerCharge"].values()) for x in d)
        out.append(f"| {v['label']} | {min_median([x['cpuMsPerCharge'] for x in d])} | {ratio} | {median(d, 'userMs'):.3f} "
                   f"| {median(d, 'kernelMs'):.3f} | {'—' if calls is None else f'{calls:.1f}'} "
                   f"| {min_median([x['chargesPerSecond'] for x in d], 0)} | {median(d, 'seconds'):.1f} "
                   f"| {max(x['peakRssMiB'] for x in d):.1f} | {handshakes_text(d)} | {aws:.2f}, {median(d, 'bankRequestsPerCharge'):.2f} "
                   f"| {rest:.2f} |")
    out += target_lines(p) + syscall_lines(p) + request_lines(p)
    return out


def target_lines(p: dict[str, Any]) -> list[str]:
    by_key = {v["key"]: v for v in p["variants"]}
    verdicts = []
    for key, targets in p.get("targets", {}).items():
        v = by_key[key]
        if "cpuMsPerCharge" in targets:
            cpu = median(v["drains"], "cpuMsPerCharge")
            verdicts.append(f"{targets['name']}, ≤ {targets['cpuMsPerCharge']} ms per charge: "
                            f"{'met' if cpu <= targets['cpuMsPerCharge'] else 'not met'} ({cpu:.3f})")
        calls = syscalls_per_charge(v, p["charges"])
        if "syscallsPerCharge" in targets and calls is not None:
            verdicts.append(f"{targets['name']}, ≤ {targets['syscallsPerCharge']} system calls per charge: "
                            f"{'met' if calls <= targets['syscallsPerCharge'] else 'not met'} ({calls:.1f})")
    return ["", "Issue 36's targets on its harness (the Python fake bank, duplicates mixed in; medians): "
            + "; ".join(verdicts) + "."] if verdicts else []


def syscall_lines(p: dict[str, Any]) -> list[str]:
    n, traced = p["charges"], [v for v in p["variants"] if v.get("strace")]
    if not traced:
        return ["", f"System calls: {p.get('straceNote') or 'not measured'}."]
    per_charge = {v["key"]: {call: count / n for call, count in v["strace"]["calls"].items()} for v in traced}
    own = sorted({call for calls in per_charge.values() for call, value in calls.items() if value >= OWN_ROW},
                 key=lambda call: -max(calls.get(call, 0) for calls in per_charge.values()))
    out = ["", "System calls per charge by call (`strace -c -f` of one more drain per variant: the consumer's whole life, "
           "start-up and shutdown included; strace slows it several-fold, so the CPU and rates above come from the untraced "
           "drains; the traced drain took " + ", ".join(f"{v['short']} {v['strace']['seconds']:.1f} s" for v in traced) + "):", "",
           "| system call | " + " | ".join(v["short"] for v in traced) + " |", "|---|" + "---:|" * len(traced),
           "| **all** | " + " | ".join(f"**{sum(per_charge[v['key']].values()):.1f}**" for v in traced) + " |"]
    for call in own:
        out.append(f"| {call} | " + " | ".join(f"{per_charge[v['key']].get(call, 0):.2f}" for v in traced) + " |")
    out.append("| others | " + " | ".join(f"{sum(x for c, x in per_charge[v['key']].items() if c not in own):.2f}" for v in traced) + " |")
    return out


def request_lines(p: dict[str, Any]) -> list[str]:
    out = ["", "Requests per charge by operation (the consumer's ic_aws_requests_total, last drain; bank: debits, "
           "inquiries and notifications):", ""]
    for v in p["variants"]:
        d = v["drains"][-1]
        ops = ", ".join(f"{op} {x:.2f}" for op, x in d["requestsPerCharge"].items())
        out.append(f"- {v['label']}: {ops}; bank {d['bankRequestsPerCharge']:.2f}")
    return out
