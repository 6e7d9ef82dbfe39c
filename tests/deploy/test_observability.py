"""The dashboard, the alert rules and the runbook agree with each other and with the binary:
every PromQL expression of the dashboard parses (promtool), every metric they use is one the
code exports, and every alert and every DLQ reason has its runbook entry."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import yaml

from tools.alert_rules import main as alert_rules_main
from tools.alert_rules import runbook_bases
from tools.local_stack import REPO_ROOT
from tools.metric_names import CIRCUIT_METRICS, exported_names, metric_names

DASHBOARD = REPO_ROOT / "deploy" / "grafana" / "charge-recovery.json"
ALERTS = REPO_ROOT / "deploy" / "prometheus" / "alerts.yml"
RUNBOOK = REPO_ROOT / "docs" / "runbook.md"
# Exported by the CloudWatch exporter, not by us (alerts.yml says why).
CLOUDWATCH = {"aws_sqs_approximate_age_of_oldest_message_maximum"}
DLQ_REASONS = ["INVALID_MESSAGE", "PAYLOAD_MISMATCH", "PERMANENT_DEBIT_FAILURE", "PREVIOUSLY_FAILED", "DEBIT_UNCERTAIN"]


def dashboard_exprs() -> list[str]:
    panels = json.loads(DASHBOARD.read_text())["panels"]
    return [t["expr"] for p in panels for t in p["targets"]]


def as_queried(expr: str) -> str:
    """What Grafana sends with the variables at "All" (tools/dashboard_snapshot.py does the same)."""
    return expr.replace("$__rate_interval", "1m").replace("$namespace", ".*").replace("$pod", ".*")


def alert_rules() -> list[dict]:
    return [r for g in yaml.safe_load(ALERTS.read_text())["groups"] for r in g["rules"]]


def test_every_dashboard_expression_parses(tmp_path: Path) -> None:
    exprs = dashboard_exprs()
    assert len(exprs) >= 15
    # promtool parses PromQL only inside rule files: each expression becomes a recording rule.
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": f"dashboard:panel_{i}", "expr": as_queried(e)} for i, e in enumerate(exprs)
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
    assert len(alerts) >= 29
    (base,) = runbook_bases(ALERTS.read_text())  # one base for every alert
    assert base.startswith("https://") and base.endswith("/docs/runbook.md"), "absolute: clickable from a pager"
    for rule in alerts:
        url = rule["annotations"]["runbook_url"]
        assert url == f"{base}#{rule['alert'].lower()}", rule["alert"]
        assert rule["alert"].lower() in have, f"docs/runbook.md has no section {rule['alert']}"
        assert rule["labels"]["severity"] in ("critical", "warning", "info")


def test_every_consumer_metric_is_scoped_by_the_namespace_and_pod_variables() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert {"datasource", "namespace", "pod"} <= set(variables)
    assert variables["pod"]["multi"] and variables["pod"]["includeAll"] and "$namespace" in variables["pod"]["definition"]
    selectors = [m for e in dashboard_exprs() for m in re.findall(r"(?<![\w:])((?:ic|process)_[a-z0-9_]+)(\{[^}]*\})?", e)]
    assert selectors, "the scan works"
    for name, labels in selectors:
        assert labels.startswith('{namespace=~"$namespace",pod=~"$pod"'), (name, labels)


def test_the_issue_24_panels_exist_and_every_panel_links_its_runbook_section() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    (base,) = runbook_bases(ALERTS.read_text())
    have = anchors(RUNBOOK.read_text())
    used = set().union(*(metric_names(e) for e in dashboard_exprs()))
    assert {"ic_dependency_seconds", "aws_sqs_approximate_age_of_oldest_message_maximum"} <= used
    assert any('result="replayed"' in e for e in dashboard_exprs())
    assert any("node_timex_offset_seconds" in e for e in dashboard_exprs())
    assert dashboard["links"][0]["url"] == base
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    for panel in dashboard["panels"]:
        (link,) = panel["links"]
        url, _, anchor = link["url"].partition("#")
        assert url == base and anchor in have, (panel["title"], link)


def test_the_runbook_base_is_configurable(tmp_path: Path) -> None:
    base = "https://wiki.bank.example/ops/charge-recovery/runbook.md"
    text = ALERTS.read_text()
    rendered = tmp_path / "alerts.yml"
    assert alert_rules_main(["--runbook-base", base, "--out", str(rendered)]) == 0
    assert runbook_bases(rendered.read_text()) == {base}
    urls = [r["annotations"]["runbook_url"] for g in yaml.safe_load(rendered.read_text())["groups"] for r in g["rules"] if "alert" in r]
    assert len(urls) == text.count("runbook_url:") and all(u.startswith(base + "#") for u in urls)
    # Nothing else changed: the same lines but the runbook_urls.
    changed = [(a, b) for a, b in zip(text.splitlines(), rendered.read_text().splitlines()) if a != b]
    assert len(changed) == len(urls) and all("runbook_url:" in a for a, _ in changed)
    done = subprocess.run(["promtool", "check", "rules", str(rendered)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert alert_rules_main(["--runbook-base", "docs/runbook.md", "--out", str(rendered)]) == 2, "relative refused"


def test_every_dlq_reason_has_a_runbook_entry() -> None:
    have = anchors(RUNBOOK.read_text())
    design = (REPO_ROOT / "docs" / "design.md").read_text()
    for reason in DLQ_REASONS:
        assert f"`{reason}`" in design  # still a reason the design documents
        assert reason.lower() in have, f"docs/runbook.md has no section {reason}"
    assert "no-failurereason-maxreceivecount-reached" in have
