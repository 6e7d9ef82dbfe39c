"""Formatting the report's sections share."""

from __future__ import annotations

import statistics

nan = float("nan")


def fmt_ops(ops: dict[str, float]) -> str:
    return ", ".join(f"{op} {v:.2f}" for op, v in ops.items()) or "-"


def min_median(values: list[float], digits: int = 3) -> str:
    """"min / median" of a run's repeats (one value alone when there is one)."""
    if len(values) == 1:
        return f"{values[0]:.{digits}f}"
    return f"{min(values):.{digits}f} / {statistics.median(values):.{digits}f}"
