"""The summary table (markdown) and the timeline plot (PNG) of a run."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from tools.chaos.checkers import CheckResult
from tools.chaos.history import Event

COLUMNS = ["scenario", "seed", "charges", "messages", "attempts", "debits", "doubles", "lost", "fenced",
           "overlaps", "drain s", "max stall s (bound)", "DLQ", "open attempts (bound)", "drain after recovery s (bound)",
           "C1", "C2", "C3", "C4", "C4L", "C5", "C6", "C7", "C8", "C9", "C10"]


def row(scenario: str, seed: int, charges: int, messages: int, results: list[CheckResult]) -> dict[str, Any]:
    by = {r.name: r for r in results}
    drain = by["C5"].counts.get("drainSeconds")
    return {
        "scenario": scenario,
        "seed": seed,
        "charges": charges,
        "messages": messages,
        "attempts": by["C1"].counts.get("attempts"),
        "debits": by["C1"].counts.get("debits"),
        "doubles": by["C1"].counts.get("doubles"),
        "lost": by["C2"].counts.get("lost"),
        "fenced": by["C4"].counts.get("fenced"),
        "overlaps": by["C4L"].counts.get("overlaps"),
        "drain s": drain if drain is not None else "no drain",
        "max stall s (bound)": f"{by['C5'].counts.get('maxStall')} ({by['C5'].counts.get('bound')})",
        "DLQ": by["C2"].counts.get("dlq"),
        "open attempts (bound)": _open_attempts(by.get("C7")),
        "drain after recovery s (bound)": _after_recovery(by.get("C8")),
        **{name: ("pass" if r.ok else "FAIL") if r.asserted else ("n/a" if r.ok else "n/a (violated)") for name, r in by.items()},
    }


STALL_COLUMNS = ["scenario", "stall", "debits/s before", "during (s)", "after", "/health/live during", "/health/ready during",
                 "SIGTERM to exit s (bound)", "reached", "lines dropped", "CS", "CL", "CT"]


def stall_row(scenario: str, f: dict[str, Any], results: list[CheckResult]) -> dict[str, Any]:
    """The stall table's row (figures from stall_checkers.stall_figures)."""
    by = {r.name: r for r in results}
    sigterm = f["sigterm"] or {}
    exit_s = sigterm.get("exitSeconds")
    bound = by["CT"].counts.get("bound")
    return {
        "scenario": scenario,
        "stall": f["fault"],
        "debits/s before": f["before"],
        "during (s)": f"{f['during']} ({f['duringSeconds']})",
        "after": f["after"],
        "/health/live during": f["health"].get("/health/live", "-"),
        "/health/ready during": f["health"].get("/health/ready", "-"),
        "SIGTERM to exit s (bound)": f"{'still running' if exit_s is None else exit_s} ({bound})",
        "reached": f["hits"],
        "lines dropped": "not counted" if f["droppedLines"] is None else f"{f['droppedLines']:.0f}",
        **{name: ("pass" if by[name].ok else "FAIL") if by[name].asserted else "n/a" for name in ("CS", "CL", "CT")},
    }


def stall_markdown(rows: list[dict[str, Any]]) -> str:
    """The stall table (issue 34's figures) of the rows that have one; empty when none do."""
    stalls = [r["stall"] for r in rows if "stall" in r]
    if not stalls:
        return ""
    lines = ["", "Stalls: debits committed per second before, during (its length: a credentials stall's ends when the "
             "first consumer's credentials expire) and after the stall (until the queue drained, at least 2 s); "
             "reached = credential requests, silent lookups or stderr bytes left unread during it.", "",
             "| " + " | ".join(STALL_COLUMNS) + " |", "|" + "|".join("---" for _ in STALL_COLUMNS) + "|"]
    lines += ["| " + " | ".join(str(r.get(c, "")) for c in STALL_COLUMNS) + " |" for r in stalls]
    return "\n".join(lines) + "\n"


def _open_attempts(result: CheckResult | None) -> str:
    if result is None or "attemptsWhileOpen" not in result.counts:
        return "-"
    c = result.counts
    return f"{c['attemptsWhileOpen']} ({c['probes']}+{c['admittedBefore']})"


def _after_recovery(result: CheckResult | None) -> str:
    if result is None or "bound" not in result.counts:
        return "-"
    return f"{result.counts['drainSeconds']} ({result.counts['bound']})"


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "|".join("---" for _ in COLUMNS) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(str(r.get(c, "")) for c in COLUMNS) + " |")
    return "\n".join(lines) + "\n"


def details(scenario: str, results: list[CheckResult]) -> str:
    return f"### {scenario}\n\n" + "".join(f"- **{r.label()}**: {r.detail}\n" for r in results) + "\n"


def plot(events: list[Event], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not events:
        return
    t0 = min(e["t"] for e in events)
    created = Counter(int(e["t"] - t0) for e in events if e["type"] == "bank" and e.get("outcome") in ("created", "commit-then-timeout"))
    acked = Counter(int(e["t"] - t0) for e in events if e["type"] in ("recorded", "dlq"))
    samples = [e for e in events if e["type"] == "sample"]
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(11, 6))
    end = int(max(e["t"] for e in events) - t0) + 1
    xs = list(range(end))
    top.plot(xs, [created.get(x, 0) for x in xs], label="debits committed /s")
    top.plot(xs, [acked.get(x, 0) for x in xs], label="charges settled /s (final write or DLQ)", alpha=0.7)
    top.set_ylabel("per second")
    top.legend(loc="upper right", fontsize=8)
    bottom.plot([s["t"] - t0 for s in samples], [s["inFlight"] for s in samples], label="in flight (not visible)")
    bottom.plot([s["t"] - t0 for s in samples], [s["visible"] for s in samples], label="visible on the queue", alpha=0.7)
    bottom.set_ylabel("messages")
    bottom.set_xlabel("seconds")
    bottom.legend(loc="upper right", fontsize=8)
    starts: dict[str, float] = {}
    for e in sorted((e for e in events if e["type"] == "fault"), key=lambda e: e["t"]):
        x = e["t"] - t0
        if e["action"] == "start":
            starts.setdefault(e["fault"], x)
        elif e["action"] == "stop" and e["fault"] in starts:
            begin = starts.pop(e["fault"])
            for axis in (top, bottom):
                axis.axvspan(begin, max(x, begin + 0.3), color="red", alpha=0.15)
            top.text(begin, top.get_ylim()[1] * 0.9, e["fault"], fontsize=7)
        elif e["action"] in ("kill", "wipe"):
            for axis in (top, bottom):
                axis.axvline(x, color="black", alpha=0.4, linewidth=0.8)
    top.set_title(title + " (shaded: faults; lines: kills / store wipe)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)
