"""The report's sections about each stack: the first table (ceiling and consumer), the ceiling
runs, the CPU of every process, the floor, resident memory, readiness, callgrind, memory growth
and scaling."""

from __future__ import annotations

from typing import Any

from bench.report.text import fmt_ops, nan


def table(results: dict[str, Any]) -> list[str]:
    lines = [
        f"Consumer figures per stack: {results['charges']} fresh charges pre-filled in the queue, then the same charges again as "
        "duplicates; the ceiling is bench/backend_ceiling.cpp draining the same number with the consumer's request shapes "
        "(receive 10, claim, complete, delete batch) through the consumer's own clients, the fastest of its runs at the "
        "concurrencies listed below the table; \"consumer / ceiling\" divides the two.", "",
        "| stack | ceiling msg/s | consumer charges/s | consumer / ceiling | CPU ms/charge | CPU ms/duplicate | peak RSS MiB "
        "| requests/charge (fresh) | requests/duplicate | idle CPU ms/min | idle receives/min | SIGTERM→exit idle s |",
        "|---|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|",
    ]
    for label, row in results["stacks"].items():
        c, ceil, best = row["consumer"], row["ceiling"]["messagesPerSecond"], row["consumerBest"]
        lines.append(
            f"| {label} | {ceil:.0f} | {best:.0f} | {best / ceil:.2f} "
            f"| {c['cpuMsPerCharge']:.3f} | {c.get('cpuMsPerDuplicate', nan):.3f} | {c['peakRssMiB']:.1f} "
            f"| {fmt_ops(c['requestsPerCharge'])} | {fmt_ops(c.get('requestsPerDuplicate', {}))} "
            f"| {c.get('idleCpuMsPerMinute', nan):.0f} | {c.get('idleReceivesPerMinute', nan):.1f} "
            f"| {c['sigtermToExitIdleSeconds']:.2f} |")
    return lines


def ceiling_run_text(run: dict[str, Any]) -> str:
    return f"{run['receivers']}×{run['workers']}: {run['messagesPerSecond']:.0f} ({run['errors']})"


def saturation(runs: list[dict[str, Any]]) -> str:
    """Whether the largest run still gained on the smaller ones (then the ceiling is a lower bound)."""
    if len(runs) < 2:
        return ""
    smaller = max(run["messagesPerSecond"] for run in runs[:-1])
    if runs[-1]["messagesPerSecond"] > 1.1 * smaller:
        return " — still rising at the largest size: not saturated, the ceiling is a lower bound"
    return " — saturated: more concurrency no longer raises the rate"


def ceiling_lines(results: dict[str, Any]) -> list[str]:
    rows = results["stacks"]
    if not rows:
        return []
    lines = ["", "Backend ceiling runs (receivers × workers: messages/s, errors):", ""]
    for label, row in rows.items():
        after = ""
        if row.get("ceilingAfter"):
            after = (f"; alternating with the consumer's drains: {', '.join(ceiling_run_text(run) for run in row['ceilingAfter'])}"
                     f" (consumer drains: {', '.join(f'{rate:.0f}' for rate in row['consumerDrains'])} charges/s)")
        lines.append(f"- {label}: " + ", ".join(ceiling_run_text(run) for run in row["ceilingRuns"]) + saturation(row["ceilingRuns"]) + after)
    return lines


def cpu_budget_lines(results: dict[str, Any], cores: int) -> list[str]:
    """Where the cores went: CPU ms per message of each process, the fastest ceiling run beside
    the consumer's fresh drain. The consumer does all the ceiling's requests plus two bank calls
    per charge, and everything shares the same cores, so where they are busy the ratio of the
    two rates cannot exceed the ratio of their CPU per message."""
    rows = results["stacks"]
    if not rows:
        return []
    lines = ["", f"CPU per message of every process ({cores} cores shared; \"cores busy\" is their sum over the run's wall time):", "",
             "| stack | run | servers (ms/message) | client ms/message | total ms/message | cores busy |",
             "|---|---|---|---:|---:|---:|"]
    for label, row in rows.items():
        for name, cpu in (("ceiling", row["ceiling"]["cpu"]), ("consumer", row["consumer"]["cpu"])):
            ms = cpu["cpuMsPerMessage"]
            servers = ", ".join(f"{role} {v:.3f}" for role, v in ms.items() if role != "client")
            lines.append(f"| {label} | {name} | {servers} | {ms['client']:.3f} | {sum(ms.values()):.3f} | {cpu['coresBusy']:.2f} |")
    return lines


def floor_lines(results: dict[str, Any]) -> list[str]:
    floor = results.get("floor")
    consumer = results["stacks"].get(results["hosts"]["emulators"], {}).get("consumer")
    if not floor or not consumer:
        return []
    mem = floor["memoryKiB"]
    # The consumer's exchanges per fresh charge: its AWS requests and the two bank calls.
    aws_requests = sum(consumer["requestsPerCharge"].values())
    lines = ["", "The floor under the consumer's figures (bench/dependency_floor.cpp, no consumer code):", "",
             f"- resident memory of the consumer's shared libraries alone, initialised as its start-up initialises them, one thread: "
             f"{mem['rssKiB'] / 1024:.1f} MiB (anonymous {mem['anonymousKiB'] / 1024:.1f} + file-backed {mem['fileKiB'] / 1024:.1f}); "
             f"the consumer's peak: {consumer['peakRssMiB']:.1f} MiB"]
    for what, shapes in (("on one epoll thread through curl's multi_socket API, 32 in flight (the event-driven transport's way)",
                          floor["exchanges"]),
                         ("blocking, 32 threads (the threaded transport's way)", floor.get("blockingExchanges"))):
        if not shapes:
            continue
        aws, bank = shapes["aws"], shapes["bank"]
        per_charge = (aws_requests * aws["cpuUsPerExchange"] + 2 * bank["cpuUsPerExchange"]) / 1000
        lines.append(f"- CPU per bare libcurl exchange {what}, kept-alive, against the fast bank: "
                     f"{aws['cpuUsPerExchange']:.1f} µs AWS-sized ({aws['userUsPerExchange']:.1f} µs user, "
                     f"{aws['contextSwitchesPerExchange']:.2f} context switches), {bank['cpuUsPerExchange']:.1f} µs bank-sized; "
                     f"× {aws_requests + 2:.2f} exchanges per charge = {per_charge:.3f} ms per charge, "
                     f"against the consumer's {consumer['cpuMsPerCharge']:.3f} ms ({consumer['cpuMsPerCharge'] / per_charge:.1f}×)")
    return lines


def memory_text(m: dict[str, Any]) -> str:
    top = ", ".join(f"{name} {mib:.2f}" for name, mib in m["topMiB"].items())
    return (f"RSS {m['rssMiB']:.1f} = anonymous {m['anonymousMiB']:.1f} + file-backed {m['fileMiB']:.1f}; "
            f"PSS {m['pssMiB']:.1f}; {m['threads']} threads; largest: {top}")


def memory_lines(results: dict[str, Any]) -> list[str]:
    rows = results["stacks"]
    if not rows:
        return []
    return (["", "Resident memory of the consumer when its drains are done (/proc/<pid>/smaps, MiB):", ""]
            + [f"- {label}: {memory_text(row['consumer']['memory'])}" for label, row in rows.items()])


def emulator_stack_lines(results: dict[str, Any]) -> list[str]:
    """Readiness, callgrind and memory growth, which run on the emulator stack only."""
    lines = []
    if "readiness" in results:
        lines.append(f"- ready after start, empty queue: {results['readiness']['readyAfterStartSeconds']:.3f} s")
        lines.append(f"- SIGTERM → exit while busy: {results['readiness']['sigtermToExitBusySeconds']:.2f} s")
    if "callgrind" in results:
        lines.append(f"- instructions per charge (callgrind Ir, {results['callgrind']['runs']}): "
                     f"{results['callgrind']['instructionsPerCharge']:,.0f}")
    for row in results.get("memory", []):
        lines.append(f"- peak RSS after {row['charges']} charges: {row['peakRssMiB']:.1f} MiB "
                     f"({row['chargesPerSecond']:.0f} charges/s, {row['cpuMsPerCharge']:.3f} CPU ms/charge)")
    return ["", f"On {results['hosts']['emulators']}:", "", *lines] if lines else []


def scaling_lines(results: dict[str, Any]) -> list[str]:
    lines = []
    for key, rows in results.get("scaling", {}).items():
        lines += ["", f"Scaling over {key} ({results['hosts']['emulators']}, {rows[0]['charges']} charges):", "",
                  f"| {key} | charges/s | CPU ms/charge | peak RSS MiB (max per process) |", "|---:|---:|---:|---:|"]
        lines += [f"| {r[key]} | {r['chargesPerSecond']:.0f} | {r['cpuMsPerCharge']:.3f} | {r['peakRssMiB']:.1f} |" for r in rows]
    return lines
