#!/usr/bin/env python3
"""Draws deploy/grafana/charge-recovery.json's panels from a real run, into a PNG for the docs.

No Grafana here, so this does what Grafana would: a real Prometheus (Debian's package, the one
that ships promtool) scrapes two real consumers on the local stack every second, with
deploy/prometheus/alerts.yml loaded, while a short workload runs: steady charges with producer
retries, a few invalid bodies, a reused chargeId with another amount, accounts the bank refuses,
failing notifications, and a 20-second bank outage. Then every target of every dashboard panel
is asked of Prometheus (query_range, `$__rate_interval` = 10 s) and plotted with matplotlib in
the dashboard's own layout. A panel whose metric this build does not export says so.

    .venv/bin/python -m tools.dashboard_snapshot [--out docs/img/dashboard.png]

Run from the repository root after `make build`. Takes about two minutes; everything it starts
is stopped at the end.
"""

from __future__ import annotations

import argparse
import json
import random
import socket
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 (after choosing the backend)

from tools.local_stack import Consumers, ProcessManager, http_ok, provision_stack, start_fake_bank, start_moto, wait_until  # noqa: E402
from tools.local_stack.paths import REPO_ROOT  # noqa: E402
from tools.metric_names import exported_names, metric_names  # noqa: E402

DASHBOARD = REPO_ROOT / "deploy" / "grafana" / "charge-recovery.json"
RULES = REPO_ROOT / "deploy" / "prometheus" / "alerts.yml"
RATE_INTERVAL = "10s"
SCRAPE_SECONDS = 1
# (seconds from start, charges per second, bank transient error rate)
PHASES = [(0, 6, 0.05), (35, 6, 0.9), (55, 6, 0.05), (80, 0, 0.05)]
RUN_SECONDS = 95


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def body(charge_id: str, account: str, amount: int) -> str:
    return json.dumps(
        {"schemaVersion": 1, "chargeId": charge_id, "accountId": account, "chargeType": "SMS_ALERT_FEE",
         "amountMinor": amount, "currency": "INR", "dueDate": "2026-11-30"},
        separators=(",", ":"),
    )


def workload_second(rng: random.Random, second: int, rate: int, sent: list[str]) -> list[str]:
    """The bodies one second of the workload publishes."""
    bodies = []
    for i in range(rate):
        charge_id = f"CHG-SNAP-{second:03d}-{i}"
        account = "ACC-NSF-0042" if rng.random() < 0.05 else f"ACC-00{rng.randrange(10**8):08d}"
        bodies.append(body(charge_id, account, 2500))
        sent.append(bodies[-1])
        if rng.random() < 0.25:  # a producer retry: the same charge as a new message
            bodies.append(rng.choice(sent))
    if second % 15 == 7:
        bodies.append('{"schemaVersion":1,"chargeId":"CHG-BAD","amountMinor":2.5}')
    if second == 20:  # billing reuses a chargeId for a different amount
        first = json.loads(sent[0])
        bodies.append(body(first["chargeId"], first["accountId"], 9900))
    return bodies


def prometheus_config(directory: Path, targets: list[str]) -> Path:
    config = directory / "prometheus.yml"
    config.write_text(json.dumps({
        "global": {"scrape_interval": f"{SCRAPE_SECONDS}s", "evaluation_interval": f"{SCRAPE_SECONDS}s"},
        "rule_files": [str(RULES)],
        "scrape_configs": [{"job_name": "charge-recovery", "static_configs": [{"targets": targets}]}],
    }))
    return config


def query_range(base: str, expr: str, start: float, end: float) -> list[dict[str, Any]]:
    query = urllib.parse.urlencode({"query": expr, "start": start, "end": end, "step": "2s"})
    with urllib.request.urlopen(f"{base}/api/v1/query_range?{query}", timeout=30) as response:
        reply = json.load(response)
    if reply.get("status") != "success":
        raise RuntimeError(f"Prometheus refused {expr!r}: {reply}")
    return reply["data"]["result"]


def as_queried(expr: str) -> str:
    """The expression as Grafana sends it with the namespace and pod variables at "All" (the
    local scrape has neither label; `=~".*"` matches a missing label too)."""
    return expr.replace("$__rate_interval", RATE_INTERVAL).replace("$namespace", ".*").replace("$pod", ".*")


def legend(template: str, labels: dict[str, str]) -> str:
    out = template
    for name, value in labels.items():
        out = out.replace("{{" + name + "}}", value)
    return out


def plot(panels: list[dict[str, Any]], results: dict[tuple[int, str], list[dict[str, Any]]], start: float,
         firing: list[str], out: Path) -> None:
    exported = exported_names()
    rows = max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in panels)
    fig = plt.figure(figsize=(24, rows * 0.55))
    grid = fig.add_gridspec(rows, 24, hspace=2.4, wspace=1.2, top=0.95, bottom=0.02, left=0.03, right=0.99)
    for panel in panels:
        pos = panel["gridPos"]
        ax = fig.add_subplot(grid[pos["y"] : pos["y"] + pos["h"], pos["x"] : pos["x"] + pos["w"]])
        ax.set_title(panel["title"], fontsize=11, loc="left")
        series = [(t, s) for t in panel["targets"] for s in results[(panel["id"], t["refId"])]]
        if not series:
            used = set().union(*(metric_names(t["expr"]) for t in panel["targets"]))
            missing = used - exported
            external = {n for n in missing if n.startswith("aws_")}
            # Labelled counters appear at their first event: no series of an exported one means none.
            if external:
                note = "from the CloudWatch exporter (not run here)"
            elif missing:
                note = f"not exported by this build: {', '.join(sorted(missing))}"
            elif not used:
                note = "from node_exporter, not run here"
            else:
                note = "no events in this run"
            ax.text(0.5, 0.5, note, ha="center", va="center", color="grey", transform=ax.transAxes, wrap=True)
            ax.set_xticks([])
            ax.set_yticks([])
            continue
        if panel["type"] == "stat":
            target, s = series[0]
            values = [float(v) for _, v in s["values"]]
            ax.plot([float(t) - start for t, _ in s["values"]], values, color="tab:green", alpha=0.35)
            ax.text(0.5, 0.45, f"{values[-1]:g}", ha="center", va="center", fontsize=26, transform=ax.transAxes)
            ax.set_xticks([])
            ax.set_yticks([])
            continue
        for target, s in series:
            xs = [float(t) - start for t, _ in s["values"]]
            ys = [float(v) for _, v in s["values"]]
            ax.plot(xs, ys, label=legend(target["legendFormat"], s["metric"]), linewidth=1.4)
        ax.tick_params(labelsize=8)
        ax.legend(fontsize=7, loc="upper left", ncol=2)
        ax.grid(alpha=0.3)
    fig.suptitle(
        "charge-recovery dashboard (deploy/grafana/charge-recovery.json) drawn from a real run: two consumers on the "
        "local stack, x axis in seconds, bank outage at 35-55 s\nalerts firing at the end: " + (", ".join(firing) or "none"),
        fontsize=13,
        y=0.985,
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=70, bbox_inches="tight")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "docs" / "img" / "dashboard.png")
    args = parser.parse_args()
    panels = json.loads(DASHBOARD.read_text())["panels"]
    rng = random.Random(12)
    with tempfile.TemporaryDirectory() as tmp:
        processes = ProcessManager(Path(tmp) / "logs")
        try:
            moto = start_moto(processes)
            bank = start_fake_bank(processes, seed=12)
            stack = provision_stack(moto, lease_seconds=5, max_receive_count=5)
            consumers = Consumers(processes, stack, bank)
            pods = [consumers.start(f"consumer-{i}", WORKERS="8") for i in (1, 2)]
            port = free_port()
            base = f"http://127.0.0.1:{port}"
            config = prometheus_config(Path(tmp), [f"127.0.0.1:{p.started['adminPort']}" for p in pods])
            processes.start(
                "prometheus",
                ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp}/tsdb",
                 f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
                ready=http_ok(f"{base}/-/ready"),
                timeout=30.0,
            )
            start = time.time()
            sent: list[str] = []
            for second in range(RUN_SECONDS):
                phase = max(p for p in PHASES if p[0] <= second)
                if phase[0] == second:
                    bank.set_faults(transientErrorRate=phase[2], notificationFailureRate=0.04,
                                    permanentFailures={"ACC-NSF": "INSUFFICIENT_FUNDS"})
                if phase[1]:
                    stack.send_bodies(workload_second(rng, second, phase[1], sent))
                wait_until(lambda: time.time() >= start + second + 1, timeout=5, interval=0.05, description="next second")
            end = time.time()
            results = {
                (p["id"], t["refId"]): query_range(base, as_queried(t["expr"]), start, end)
                for p in panels
                for t in p["targets"]
            }
            firing = sorted({s["metric"]["alertname"] for s in query_range(base, 'ALERTS{alertstate="firing"}', end - 2, end)})
            plot(panels, results, start, firing, args.out)
            consumers.stop_all()
        finally:
            processes.stop_all()
    print(f"dashboard_snapshot: wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
