"""`make bench`: runs the chosen runs (bench/runs/, one module per kind) on the stacks they need,
writes what they measured to build/bench/results.json, then renders build/bench/report.md
and its plots from that file (bench/report/; `python -m bench.report --from results.json`
renders again without running anything). A measurement, not a test.

    .venv/bin/python -m bench.run [--smoke] [--big] [--runs production peak ...] [--stacks ...]
                                  [--build-dir build/release] [--out build/bench]

Each stack (an SQS and a DynamoDB backend, the bench's bank; bench/stack.py) is started once
and hosts the runs that belong to it: every stack its row of the first table (the backend
ceiling and the consumer's drains); ElasticMQ + dynalite, the fastest emulator stack, also the
floor, readiness, the production variants, scaling, memory, callgrind and the re-check run;
fast+fast (bench/fast_aws/, the bench's own backend: the emulators cap the machine at about
600 charges/s) the latency-injected and peak runs. --smoke (CI, about a minute): 200 charges,
ElasticMQ + dynalite and fast+fast only, one 32-in-flight latency drain and one small TLS
production drain, no scaling, memory, callgrind, re-check or peak run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

try:
    from bench import report
    from bench.runs import callgrind, ceiling, drains, floor, latency, peak, production, recheck, scaling
    from bench.stack import FAST, FAST_AWS, OUT, STACKS, Stack, stack
    from tools.local_stack.paths import REPO_ROOT
except ModuleNotFoundError as e:  # run by path: sys.path[0] is bench/, not the root
    if e.name not in ("tools", "bench"):
        raise
    raise SystemExit("run it from the repository root as `.venv/bin/python -m bench.run`") from e

# The runs besides each stack's row ("stacks"), in the order they run, and the stack each needs.
HOME = {"floor": FAST, "readiness": FAST, "production": FAST, "scaling": FAST, "memory": FAST, "callgrind": FAST,
        "recheck": FAST, "latency": FAST_AWS, "peak": FAST_AWS}
KINDS = ["stacks", *HOME]
SMOKE_KINDS = ["stacks", "floor", "readiness", "production", "latency"]
SMOKE_PRODUCTION = {"n": 100, "rounds": 1, "keys": ["tls"], "warm_up": False}


def runs_on(st: Stack, args: argparse.Namespace, n: int) -> dict[str, Callable[[], Any]]:
    """What each wanted run of this stack does, keyed by the results' key, in order. The floor
    comes first, so that nothing has run on the stack before it."""
    smoke = args.smoke
    todo: dict[str, Callable[[], Any]] = {
        "floor": lambda: floor.run(st),
        "stacks": lambda: drains.stack_row(st, n, smoke),
        "readiness": lambda: drains.ready_and_busy_stop(st, n),
        "production": lambda: production.run(st, args.out / "production", **(SMOKE_PRODUCTION if smoke else {
            "n": args.production_charges, "rounds": args.production_rounds, "keys": args.variants})),
        "scaling": lambda: scaling.over_workers_and_processes(st, min(2000, n)),
        "memory": lambda: scaling.over_charges(st, [args.memory_charges] + ([100_000] if args.big else [])),
        "callgrind": lambda: callgrind.run(st, *args.callgrind),
        "recheck": lambda: recheck.run(st),
        "latency": lambda: latency.run(st, smoke),
        "peak": lambda: peak.run_both(st, args.peak_seconds),
    }
    return {kind: do for kind, do in todo.items() if kind in args.runs and (HOME.get(kind, st.label) == st.label)}


def measure_stack(args: argparse.Namespace, results: dict[str, Any], label: str, sqs_kind: str, dynamodb_kind: str, n: int) -> None:
    with stack(label, sqs_kind, dynamodb_kind, args.build_dir) as st:
        if "bankCeiling" not in results:
            results["bankCeiling"] = ceiling.bank_ceiling(st)
        for kind, do in runs_on(st, args, n).items():
            print(f"== {label}: {kind}", flush=True)
            try:
                value = do()
            except Exception as e:  # one run failing must not lose the others' figures
                results["errors"][f"{label} {kind}"] = f"failed: {type(e).__name__}: {str(e)[:300]}"
                print(results["errors"][f"{label} {kind}"], flush=True)
                continue
            if kind == "stacks":
                results["stacks"][label] = value
                print(f"{label}: consumer {value['consumerBest']:.0f} charges/s = "
                      f"{value['consumerBest'] / value['ceiling']['messagesPerSecond']:.2f} of the ceiling "
                      f"({value['ceiling']['messagesPerSecond']:.0f} msg/s)", flush=True)
            else:
                results[kind] = value
                print(json.dumps({kind: value})[:2000], flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny counts, ElasticMQ + dynalite and fast+fast, CI's runs only")
    parser.add_argument("--big", action="store_true", help="also measure memory at 100k charges")
    parser.add_argument("--runs", nargs="+", choices=KINDS, help="only these runs (default: all; with --smoke, CI's)")
    parser.add_argument("--stacks", nargs="+", choices=[label for label, _, _ in STACKS],
                        help="only these stacks' rows of the first table (default: all)")
    parser.add_argument("--charges", type=int, help="fresh charges per stack run (default 3000, moto 600)")
    parser.add_argument("--production-charges", type=int, default=2000, help="charges of each production drain (+30 %% duplicates)")
    parser.add_argument("--production-rounds", type=int, default=2, help="drains of each production variant")
    parser.add_argument("--variants", nargs="+", choices=[v.key for v in production.VARIANTS], help="production variants (default: all)")
    parser.add_argument("--memory-charges", type=int, default=10_000, help="the memory run's charges (--big adds 100k)")
    parser.add_argument("--callgrind", type=int, nargs=2, default=(100, 300), metavar=("SMALL", "LARGE"),
                        help="charges of the two callgrind runs")
    parser.add_argument("--peak-seconds", type=float, default=30.0, help="how long each peak run offers 1,150 charges/s")
    parser.add_argument("--build-dir", type=Path, default=REPO_ROOT / "build" / "release")
    parser.add_argument("--out", type=Path, default=OUT, help="where results.json, report.md and the plots go (default build/bench)")
    args = parser.parse_args()
    args.build_dir = args.build_dir.resolve()
    args.runs = set(args.runs or (SMOKE_KINDS if args.smoke else KINDS))
    OUT.mkdir(parents=True, exist_ok=True)
    t_start = time.monotonic()
    n_fast, n_moto = (200, 0) if args.smoke else (3000, 600)
    if args.charges:
        n_fast = args.charges
        n_moto = min(args.charges, n_moto) if n_moto else 0
    results: dict[str, Any] = {
        "command": " ".join(["python -m bench.run", *sys.argv[1:]]), "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start", "build": str(args.build_dir),
        "cores": os.cpu_count(), "charges": f"{n_fast} (moto: {n_moto})" if n_moto else str(n_fast), "hosts": {"emulators": FAST, "fastAws": FAST_AWS},
        "stacks": {}, "errors": {},
    }
    for label, sqs_kind, dynamodb_kind in STACKS:
        n = n_fast if label != "moto+moto" else n_moto
        row_wanted = "stacks" in args.runs and n > 0 and (label in args.stacks if args.stacks else not args.smoke or label in (FAST, FAST_AWS))
        others_wanted = any(HOME[kind] == label for kind in args.runs if kind != "stacks")
        if not row_wanted and not others_wanted:
            continue
        runs = set(args.runs) if row_wanted else args.runs - {"stacks"}
        print(f"== {label}", flush=True)
        try:
            measure_stack(argparse.Namespace(**{**vars(args), "runs": runs}), results, label, sqs_kind, dynamodb_kind, n or n_fast)
        except Exception as e:  # a stack that did not start must not lose the others' figures
            results["errors"][label] = f"failed: {type(e).__name__}: {str(e)[:300]}"
            print(results["errors"][label], flush=True)
    results["wallSeconds"] = time.monotonic() - t_start
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=2))
    print(report.render(results, args.out))
    return 1 if results["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
