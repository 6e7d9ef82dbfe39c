"""The report's PNG plots, from results.json like its text."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any


def plots(results: dict[str, Any], out: Path) -> list[str]:
    """Writes the plots the results have data for into `out`; returns their file names."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made = []

    def save(fig: Any, name: str) -> None:
        fig.tight_layout()
        fig.savefig(out / name)
        plt.close(fig)
        made.append(name)

    production = results.get("production")
    if production:
        variants = production["variants"]
        user = [statistics.median(d["userMs"] for d in v["drains"]) for v in variants]
        kernel = [statistics.median(d["kernelMs"] for d in v["drains"]) for v in variants]
        fig, ax = plt.subplots(figsize=(7, 3.5))
        names = [v["short"] for v in variants]
        ax.bar(names, user, label="user")
        ax.bar(names, kernel, bottom=user, label="kernel")
        ax.set_ylabel("consumer CPU ms per charge")
        ax.legend()
        ax.set_title(f"Production's work: {production['charges']} charges + {production['duplicateRate']:.0%} duplicates (median)")
        save(fig, "production.png")
    stacks = list(results["stacks"])
    if stacks:
        fig, ax = plt.subplots(figsize=(7, 3.5))
        xs = range(len(stacks))
        ax.bar([x - 0.2 for x in xs], [results["stacks"][s]["ceiling"]["messagesPerSecond"] for s in stacks], 0.4, label="backend ceiling")
        ax.bar([x + 0.2 for x in xs], [results["stacks"][s]["consumerBest"] for s in stacks], 0.4, label="consumer")
        ax.set_xticks(list(xs), stacks)
        ax.set_ylabel("charges/s")
        ax.legend()
        ax.set_title("Consumer vs backend ceiling (fresh charges, WORKERS=32)")
        save(fig, "throughput.png")
        fig, ax = plt.subplots(figsize=(7, 3.5))
        ax.bar(stacks, [results["stacks"][s]["consumer"]["cpuMsPerCharge"] for s in stacks])
        ax.set_ylabel("consumer CPU ms per charge")
        ax.set_title("Consumer CPU per fresh charge")
        save(fig, "cpu.png")
    emulators = results["hosts"]["emulators"]
    for key, title, xlabel in (("workers", "Scaling over WORKERS (one process)", "WORKERS"),
                               ("processes", "Scaling over consumer processes (WORKERS=32)", "processes")):
        rows = results.get("scaling", {}).get(key)
        if rows:
            fig, ax = plt.subplots(figsize=(6, 3.5))
            ax.plot([r[key] for r in rows], [r["chargesPerSecond"] for r in rows], marker="o", label="consumer")
            if emulators in results["stacks"]:
                ax.axhline(results["stacks"][emulators]["ceiling"]["messagesPerSecond"], linestyle="--", color="grey", label="backend ceiling")
            ax.set_xscale("log", base=2)
            ax.set_xlabel(xlabel)
            ax.set_ylabel("charges/s")
            ax.set_title(f"{title}, {emulators}")
            ax.legend()
            save(fig, f"scaling-{key}.png")
    return made
