"""Scaling: fresh drains over WORKERS (8, 32, 128 in one process), over consumer processes
(1, 2, 4 of 32 workers), and over charges (peak RSS after 10,000, and 100,000 with --big: no
growth is the figure)."""

from __future__ import annotations

from typing import Any

from bench.runs.drains import consumer_run
from bench.stack import Stack

WORKERS = (8, 32, 128)
PROCESSES = (1, 2, 4)


def over_workers_and_processes(st: Stack, n: int) -> dict[str, list[dict[str, Any]]]:
    return {"workers": [consumer_run(st, n, workers=w, duplicates=False) for w in WORKERS],
            "processes": [consumer_run(st, n, processes=p, duplicates=False) for p in PROCESSES]}


def over_charges(st: Stack, counts: list[int]) -> list[dict[str, Any]]:
    return [consumer_run(st, n, duplicates=False) for n in counts]
