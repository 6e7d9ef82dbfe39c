"""The dashboard, the alert rules and the runbook agree with each other and with the binary:
every PromQL expression of the dashboard parses (promtool), every metric they use is one the
code exports, and every alert and every DLQ reason has its runbook entry."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import yaml

from tools.local_stack import REPO_ROOT
from tools.metric_names import CIRCUIT_METRICS, exported_names, metric_names

DASHBOARD = REPO_ROOT / "deploy" / "grafana" / "charge-recovery.json"
ALERTS = REPO_ROOT / "deploy" / "prometheus" / "alerts.yml"
RUNBOOK = REPO_ROOT / "docs" / "runbook.md"
# Exported by the CloudWatch exporter, not by us (alerts.yml says why).
CLOUDWATCH = {"aws_sqs_approximate_age_of_oldest_message_maximum"}
DLQ_REASONS = ["INVALID_MESSAGE", "PAYLOAD_MISMATCH", "PERMANENT_DEBIT_FAILURE", "PREVIOUSLY_FAILED"]


def dashboard_exprs() -> list[str]:
    panels = json.loads(DASHBOARD.read_text())["panels"]
    return [t["expr"] for p in panels for t in p["targets"]]


def alert_rules() -> list[dict]:
    return [r for g in yaml.safe_load(ALERTS.read_text())["groups"] for r in g["rules"]]


def test_every_dashboard_expression_parses(tmp_path: Path) -> None:
    exprs = dashboard_exprs()
    assert len(exprs) >= 15
    # promtool parses PromQL only inside rule files: each expression becomes a recording rule.
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": f"dashboard:panel_{i}", "expr": e.replace("$__rate_interval", "1m")} for i, e in enumerate(exprs)
    ]}]}
    path = tmp_path / "dashboard-rules.yml"
    path.write_text(yaml.safe_dump(rules))
    done = subprocess.run(["promtool", "check", "rules", str(path)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(exprs)} rules found" in done.stdout


def scaler_queries() -> list[str]:
    """The PromQL of the KEDA ScaledObject's prometheus triggers."""
    documents = yaml.safe_load_all((REPO_ROOT / "deploy" / "k8s" / "keda-scaledobject.yaml").read_text())
    return [t["metadata"]["query"] for d in documents if d and d["kind"] == "ScaledObject"
            for t in d["spec"]["triggers"] if t["type"] == "prometheus"]


def test_metrics_used_are_exported() -> None:
    used: set[str] = set()
    assert scaler_queries()
    for expr in dashboard_exprs() + [r["expr"] for r in alert_rules()] + scaler_queries():
        used |= metric_names(expr)
    exported = exported_names()
    assert {"ic_fenced_total", "ic_debits_total", "ic_dlq_forwards_total"} <= exported  # the scan works
    assert used - exported - CLOUDWATCH == set()
    assert CIRCUIT_METRICS <= exported, f"circuit metrics not exported: {sorted(CIRCUIT_METRICS - exported)}"


def anchors(markdown: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes."""
    headings = re.findall(r"^#+ (.+)$", markdown, re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_every_alert_links_to_its_runbook_entry() -> None:
    have = anchors(RUNBOOK.read_text())
    alerts = [r for r in alert_rules() if "alert" in r]
    assert len(alerts) >= 20
    for rule in alerts:
        url = rule["annotations"]["runbook_url"]
        assert url == f"docs/runbook.md#{rule['alert'].lower()}", rule["alert"]
        assert rule["alert"].lower() in have, f"docs/runbook.md has no section {rule['alert']}"
        assert rule["labels"]["severity"] in ("critical", "warning", "info")


def test_every_dlq_reason_has_a_runbook_entry() -> None:
    have = anchors(RUNBOOK.read_text())
    design = (REPO_ROOT / "docs" / "design.md").read_text()
    for reason in DLQ_REASONS:
        assert f"`{reason}`" in design  # still a reason the design documents
        assert reason.lower() in have, f"docs/runbook.md has no section {reason}"
    assert "no-failurereason-maxreceivecount-reached" in have
