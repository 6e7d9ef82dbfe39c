"""The report's section on the re-check after a latency shift (bench/runs/recheck.py), and the
text of a copy's timeline, which the run prints as it goes."""

from __future__ import annotations

import math
import statistics
from typing import Any


def p90(values: list[float]) -> float:
    """Nearest rank."""
    return sorted(values)[math.ceil(0.9 * len(values)) - 1]


def stats(rows: list[dict[str, Any]]) -> dict[str, Any]:
    late = [r["settledAfterSeconds"] for r in rows]
    return {"count": len(rows), "median": statistics.median(late), "p90": p90(late), "max": max(late),
            "recheckClaimsPerCopy": statistics.mean(r["recheckClaims"] for r in rows),
            "claimsPerCopy": statistics.mean(r["claims"] for r in rows)}


def timeline_text(row: dict[str, Any]) -> str:
    """The copy's claims (and the delivery its holder's process kept) from the holder's claim."""
    parts = []
    for e in row["timeline"]:
        text = f"+{e['at']:.2f} s {e['process']} {e['outcome']}"
        if "policy" in e:
            estimate = "no estimate" if e["p90"] is None else f"p90 ≈{e['p90']:.2f} s"
            text += f" ({estimate}, holder at {e['holderElapsed']:.2f} s: delay ≈{e['policy']:.2f} s"
            text += f", next {e['nextAfter']:.2f} s later)" if "nextAfter" in e else ")"
        parts.append(text)
    return "; ".join(parts) + f"; the original's final write at +{row['effectSeconds']:.2f} s, the copy settled at +{row['settledAt']:.2f} s"


def goal_text(rows: list[dict[str, Any]], goal_seconds: float) -> str:
    late = [r["settledAfterSeconds"] for r in rows]
    met = sum(v <= goal_seconds for v in late)
    return f"{'met' if met == len(late) else 'not met'}, {met} of {len(late)} (max {max(late):.2f} s)"


def lines(result: dict[str, Any] | None, backend: str) -> list[str]:
    if not result:
        return []
    slow, warm_ms, goal = result["slowMs"], result["warmMs"], result["goalSeconds"]
    shared_rows, split_rows = result.get("shared", {}).get("copies", []), result.get("split", {}).get("copies", [])
    warm = "; ".join(f"{name} {', '.join(f'{k} {v}' for k, v in result[name]['warmEffects'].items())}"
                     for name in ("shared", "split") if name in result)
    out = ["", f"Re-check after a latency shift (bench/runs/recheck.py, {backend}, the Python fake bank): two consumers of "
           f"WORKERS={result['workers']} warmed up at {warm_ms} ms per bank call (effects recorded: {warm}), then {slow} ms per call; "
           "charges one at a time, each with a copy sent once the original was claimed; seconds from the original's final "
           f"write to the copy's final answer (load average {result['loadAverage']:.1f} at the end). \"shared\": both consume "
           "one queue; \"split\": one queue each on one table, the copy sent to the other process's queue, so that every "
           "re-check is a claim by the copy's process:", "",
           "| queues | copy | copies | median s | p90 s | max s | re-check claims per copy | claims per copy |",
           "|---|---|---:|---:|---:|---:|---:|---:|"]
    groups = [("shared", "re-checked (first received by the other process)", [r for r in shared_rows if r["rechecked"]]),
              ("shared", "↳ ended by a re-check's claim reading DONE", [r for r in shared_rows if r["kind"] == "rechecked"]),
              ("shared", "↳ ended by a re-check received by the holder's process", [r for r in shared_rows if r["kind"] == "rechecked-held"]),
              ("shared", "settled locally (first received by the holder's process)", [r for r in shared_rows if r["kind"] == "local"]),
              ("shared", "other (claimed after the original finished)", [r for r in shared_rows if r["kind"] == "other"]),
              ("split", "re-checked", split_rows),
              ("split", f"↳ its process still estimating the {warm_ms} ms effects", [r for r in split_rows if r["estimate"] == "old"]),
              ("split", f"↳ its process's estimate adapted to {slow} ms", [r for r in split_rows if r["estimate"] == "adapted"])]
    for queues, label, mine in groups:
        if mine:
            s = stats(mine)
            out.append(f"| {queues} | {label} | {s['count']} | {s['median']:.2f} | {s['p90']:.2f} | {s['max']:.2f} "
                       f"| {s['recheckClaimsPerCopy']:.2f} | {s['claimsPerCopy']:.2f} |")
    goals = [f"{name}: {goal_text(rows, goal)}" for name, rows in (("split (every re-check a claim)", split_rows),
                                                              ("shared", [r for r in shared_rows if r["rechecked"]])) if rows]
    if goals:
        out += ["", f"Goal, a re-checked copy settled ≤ {goal:.0f} s after its original's final write: " + "; ".join(goals) + "."]
    for estimate in ("old", "adapted"):
        mine = [r for r in split_rows if r["estimate"] == estimate]
        if mine:
            slowest = max(mine, key=lambda r: r["settledAfterSeconds"])
            out.append(f"- the slowest split copy on the {estimate} estimate ({slowest['settledAfterSeconds']:.2f} s), "
                       f"from the holder's claim: {timeline_text(slowest)}")
    return out
