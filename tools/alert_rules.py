"""deploy/prometheus/alerts.yml with another runbook base.

Every alert's runbook_url is absolute, `<base>#<alert name in lower case>`, so it is clickable
from Alertmanager, a pager or a chat message; the committed file's base is the repository's
rendering of docs/runbook.md. Where the runbook is published elsewhere (a wiki, an internal
mirror), this writes the rules with that base, changing nothing else (a text substitution, so
comments and layout stay as reviewed):

    .venv/bin/python -m tools.alert_rules --runbook-base https://wiki.example/cr/runbook.md --out alerts.rendered.yml
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from tools.local_stack.paths import REPO_ROOT

ALERTS = REPO_ROOT / "deploy" / "prometheus" / "alerts.yml"
_URL = re.compile(r"^(\s*runbook_url: )(\S+)#([a-z0-9-]+)$", re.MULTILINE)


def runbook_bases(text: str) -> set[str]:
    """The bases the rules' runbook_urls use (one, in a consistent file)."""
    return {m.group(2) for m in _URL.finditer(text)}


def with_runbook_base(text: str, base: str) -> str:
    if not re.fullmatch(r"https?://\S+", base):
        raise ValueError(f"--runbook-base must be an absolute http(s) URL without spaces, got {base!r}")
    return _URL.sub(lambda m: f"{m.group(1)}{base.rstrip('#')}#{m.group(3)}", text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runbook-base", required=True, help="absolute URL of the published runbook.md")
    parser.add_argument("--rules", type=Path, default=ALERTS)
    parser.add_argument("--out", type=Path, help="default: stdout")
    args = parser.parse_args(argv)
    try:
        rendered = with_runbook_base(args.rules.read_text(), args.runbook_base)
    except ValueError as e:
        print(f"alert_rules: {e}", file=sys.stderr)
        return 2
    if args.out:
        args.out.write_text(rendered)
    else:
        sys.stdout.write(rendered)
    return 0


if __name__ == "__main__":
    sys.exit(main())
