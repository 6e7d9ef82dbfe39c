"""`python -m bench.report --from build/bench/results.json`: the report again, from a results
file, running nothing."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bench.report import render


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="source", type=Path, default=Path("build/bench/results.json"), help="a results.json of bench.run")
    parser.add_argument("--out", type=Path, help="where report.md and the plots go (default: beside the results file)")
    args = parser.parse_args()
    results = json.loads(args.source.read_text())
    print(render(results, args.out or args.source.parent))
    return 0


if __name__ == "__main__":
    sys.exit(main())
