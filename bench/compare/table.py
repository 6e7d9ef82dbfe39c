"""bench/compare/run.py's results as figures and as the report's Markdown: per consumer, min /
median over its rounds, and each reference's ratio to ours (cold and warm apart)."""

from __future__ import annotations

from statistics import median
from typing import Any

LABELS = {"ours": "ours (C++ `charge-recovery run`)", "powertools": "Python boto3 + Powertools idempotency",
          "spring": "Spring Boot 3.5 + Spring Cloud AWS 3.4"}


def _spread(values: list[float]) -> dict[str, float] | None:
    return {"min": min(values), "median": median(values), "max": max(values)} if values else None


def summarize(results: dict[str, Any]) -> dict[str, Any]:
    """Per consumer: every figure of the table as {min, median, max} over its rounds."""
    out: dict[str, Any] = {}
    for kind in results["consumers"]:
        drains = [d for d in results["drains"] if d["consumer"] == kind and "error" not in d]
        row: dict[str, Any] = {"failed": sum(d["consumer"] == kind and "error" in d for d in results["drains"]),
                               "exactlyOnce": bool(drains) and all(d["exactlyOnce"] for d in drains)}
        for phase in ("cold", "warm"):
            mine = [d for d in drains if d["phase"] == phase]
            for field in ("cpuMsPerCharge", "seconds", "lastDebitSeconds", "awsHandshakes"):
                row[f"{phase}.{field}"] = _spread([d[field] for d in mine if d.get(field) is not None])
        row["inProgressCopies"] = _spread([d["inProgressCopies"] for d in drains])
        cold = [d for d in drains if d["phase"] == "cold"]
        row["readySeconds"] = _spread([d["readySeconds"] for d in cold])
        row["startupCpuSeconds"] = _spread([d["startupCpuSeconds"] for d in cold])
        row["peakRssMiB"] = _spread([d["peakRssMiB"] for d in drains])
        row["idleCpuMsPerMinute"] = _spread([i["cpuMsPerMinute"] for i in results["idle"] if i["consumer"] == kind])
        out[kind] = row
    for kind, row in out.items():
        for phase in ("cold", "warm"):
            ours, mine = out.get("ours", {}).get(f"{phase}.cpuMsPerCharge"), row[f"{phase}.cpuMsPerCharge"]
            row[f"{phase}.ratio"] = {k: mine[k] / ours[k] for k in ("min", "median")} if ours and mine else None
    return out


def _pair(spread: dict[str, float] | None, digits: int) -> str:
    """min / median, or the one value when they agree at this precision."""
    if spread is None:
        return "–"
    low, mid = f"{spread['min']:.{digits}f}", f"{spread['median']:.{digits}f}"
    return low if low == mid else f"{low} / {mid}"


def _cpu(row: dict[str, Any], phase: str, kind: str) -> str:
    text = _pair(row[f"{phase}.cpuMsPerCharge"], 3)
    ratio = row[f"{phase}.ratio"]
    if ratio and kind != "ours":
        text += f" (**{ratio['min']:.1f}×** / {ratio['median']:.1f}×)"
    return text


def _drain(row: dict[str, Any], phase: str) -> str:
    text = _pair(row[f"{phase}.seconds"], 1)
    if row[f"{phase}.lastDebitSeconds"]:
        text += f" ({_pair(row[f'{phase}.lastDebitSeconds'], 1)})"
    return text


def markdown(results: dict[str, Any]) -> str:
    kinds = results["consumers"]
    rows = results["summary"]
    bank = "the fake bank (`python -m tools.fake_bank`)" if results["bank"] == "fake" else "the fast bank (bench/fast_bank.cpp)"
    over = ("**over TLS**: SQS and DynamoDB over HTTPS through TLS proxies, the bank over HTTPS with client certificates"
            if results["tls"] else "plain HTTP")
    java = f"; Spring on {results['java']}" if results.get("java") else ""
    warm_after = results["charges"] + results["warmup"]
    lines = [
        f"**`{results['command']}`, {results['when']}**, {results['machine']}; ElasticMQ + dynalite and {bank}, {over}; "
        f"per drain {results['charges']:,} fresh charges + {results['duplicateRate']:.0%} duplicates mixed in, "
        f"{results['workers']} in flight; {results['rounds']} fresh processes of each, min / median{java} "
        f"({results['wallSeconds']:.0f} s):", "",
        "| | " + " | ".join(LABELS[k] for k in kinds) + " |",
        "|---|" + "---:|" * len(kinds),
        "| CPU ms per charge, **cold** (a new process's first drain, start-up included; ratio to ours) | "
        + " | ".join(_cpu(rows[k], "cold", k) for k in kinds) + " |",
        f"| CPU ms per charge, **warm** (after {warm_after:,} charges; ratio to ours) | "
        + " | ".join(_cpu(rows[k], "warm", k) for k in kinds) + " |",
        "| start-up CPU s (to ready) | " + " | ".join(_pair(rows[k]["startupCpuSeconds"], 2) for k in kinds) + " |",
        "| ready s | " + " | ".join(_pair(rows[k]["readySeconds"], 2) for k in kinds) + " |",
        "| drain s, cold (last debit s) | " + " | ".join(_drain(rows[k], "cold") for k in kinds) + " |",
        "| drain s, warm (last debit s) | " + " | ".join(_drain(rows[k], "warm") for k in kinds) + " |",
        "| duplicates that found their original in progress, per drain | "
        + " | ".join(_pair(rows[k]["inProgressCopies"], 0) for k in kinds) + " |",
        "| idle CPU ms/min | " + " | ".join(_pair(rows[k]["idleCpuMsPerMinute"], 0) for k in kinds) + " |",
        "| peak RSS MiB (max) | " + " | ".join(f"{rows[k]['peakRssMiB']['max']:.1f}" if rows[k]["peakRssMiB"] else "–" for k in kinds) + " |",
    ]
    if results["tls"]:
        lines.append("| AWS TLS handshakes per warm drain | " + " | ".join(_pair(rows[k]["warm.awsHandshakes"], 0) for k in kinds) + " |")
    lines.append("| one debit and one notification per charge, no repeated debit call | "
                 + " | ".join(("yes" if rows[k]["exactlyOnce"] else "**NO**") + (f", {rows[k]['failed']} failed" if rows[k]["failed"] else "")
                              for k in kinds) + " |")
    lines += ["", "CPU per charge is the process group's until the drain's last debit (the fake bank's time of it; with the fast "
              "bank, until the queue is empty); a cold drain's counts from the spawn. Every drain, in the order run, with the CPU "
              "until the queue is empty beside it and the servers' CPU per charge over the drain:", "",
              "| round | consumer | drain | messages | s | last debit s | charges/s | CPU ms/charge to last debit | to empty queue | in-progress copies | peak RSS MiB | "
              "threads | emulators + bank (+ proxies) ms/charge | cores busy | debits / replays / notifications |",
              "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for d in results["drains"]:
        if "error" in d:
            lines.append(f"| {d['round']} | {d['consumer']} | {d['error']} |" + " |" * 12)
            continue
        last = f"{d['lastDebitSeconds']:.1f}" if d.get("lastDebitSeconds") is not None else "–"
        lines.append(f"| {d['round']} | {d['consumer']} | {d['phase']} | {d['messages']} | {d['seconds']:.1f} | {last} | "
                     f"{d['chargesPerSecond']:.0f} | {d['cpuMsPerCharge']:.3f} | {d['cpuMsPerChargeToEmpty']:.3f} | {d['inProgressCopies']} | {d['peakRssMiB']:.1f} | "
                     f"{d['threads']} | {sum(d['serversMsPerCharge'].values()):.2f} | {d['coresBusy']:.2f} | "
                     f"{d['debits']} / {d['replays']} / {d['notifications']} |")
    return "\n".join(lines) + "\n"
