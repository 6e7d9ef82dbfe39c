"""What the schemas cannot check about deploy/: that the manifests, the unit and the image agree
with each other and with the binary. kubeconform (deploy/check.sh) checks each object's shape;
these check the wiring between them, and finally start the consumer with the manifests' own
settings on the local stack.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tools.local_stack import ChargeStack, Consumers, FakeBank, REPO_ROOT, wait_until
from tools.local_stack.charge_recovery import image_environment

DEPLOY = REPO_ROOT / "deploy"
LONG_POLL_SECONDS = 20 + 5  # WaitTimeSeconds plus the answer's margin (docs/design.md §4)


def objects() -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for path in sorted((DEPLOY / "k8s").glob("*.yaml")):
        docs.extend(d for d in yaml.safe_load_all(path.read_text()) if d)
    return docs


def the(kind: str, name: str = "charge-recovery") -> dict[str, Any]:
    found = [o for o in objects() if o["kind"] == kind and (kind == "TriggerAuthentication" or o["metadata"]["name"] == name)]
    assert len(found) == 1, f"expected one {kind} {name}, found {len(found)}"
    return found[0]


def container() -> dict[str, Any]:
    (c,) = the("Deployment")["spec"]["template"]["spec"]["containers"]
    return c


def pod_settings() -> dict[str, str]:
    """The environment the container starts with: the ConfigMap, then env (which wins)."""
    c = container()
    (source,) = c["envFrom"]
    assert source["configMapRef"]["name"] == the("ConfigMap")["metadata"]["name"]
    return {**the("ConfigMap")["data"], **{e["name"]: e["value"] for e in c["env"]}}


def unit_settings() -> dict[str, str]:
    lines = (DEPLOY / "systemd" / "charge-recovery.env").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))


def unit_directives() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in (DEPLOY / "systemd" / "charge-recovery.service").read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            out.setdefault(key, []).append(value)
    return out


def documented_settings() -> set[str]:
    """The variables of docs/design.md §5's configuration table."""
    text = (REPO_ROOT / "docs" / "design.md").read_text()
    section = text[text.index("### Configuration") : text.index("### Command line")]
    return set(re.findall(r"^\| `([A-Z0-9_]+)`", section, re.MULTILINE))


def test_probes_and_scrapes_reach_the_port_admin_addr_binds() -> None:
    host, port = pod_settings()["ADMIN_ADDR"].rsplit(":", 1)
    # The pod IP, where kubelet and Prometheus connect; loopback would be unreachable for them.
    assert host == "0.0.0.0"
    c = container()
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert ports == {"admin": int(port)}
    assert c["livenessProbe"]["httpGet"] == {"path": "/health/live", "port": "admin"}
    assert c["readinessProbe"]["httpGet"] == {"path": "/health/ready", "port": "admin"}
    annotations = the("Deployment")["spec"]["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/port"] == port
    assert annotations["prometheus.io/path"] == "/metrics"


def test_admin_port_is_reachable_from_the_monitoring_namespace_only() -> None:
    assert not [o for o in objects() if o["kind"] in ("Service", "Ingress")], "nothing may expose the admin port"
    c = container()
    assert "hostPort" not in c["ports"][0]
    assert not the("Deployment")["spec"]["template"]["spec"].get("hostNetwork", False)
    policy = the("NetworkPolicy")["spec"]
    assert policy["podSelector"]["matchLabels"] == the("Deployment")["spec"]["template"]["metadata"]["labels"]
    assert "Ingress" in policy["policyTypes"]
    (rule,) = policy["ingress"]
    assert rule["from"] == [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}]
    assert rule["ports"] == [{"protocol": "TCP", "port": c["ports"][0]["containerPort"]}]


def test_objects_refer_to_each_other_by_the_right_names() -> None:
    namespace = the("Namespace")["metadata"]["name"]
    assert {o["metadata"]["namespace"] for o in objects() if o["kind"] != "Namespace"} == {namespace}
    deployment = the("Deployment")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"] == labels
    assert the("PodDisruptionBudget")["spec"]["selector"]["matchLabels"] == labels
    account = the("ServiceAccount")
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == account["metadata"]["name"]
    assert re.fullmatch(r"arn:aws:iam::\d{12}:role/[\w+=,.@-]+", account["metadata"]["annotations"]["eks.amazonaws.com/role-arn"])
    scaled = the("ScaledObject")["spec"]
    assert scaled["scaleTargetRef"]["name"] == deployment["metadata"]["name"]
    triggers = {t["name"]: t for t in scaled["triggers"]}
    assert sorted(triggers) == ["circuit_open", "queue_backlog"]
    trigger = triggers["queue_backlog"]
    assert trigger["type"] == "aws-sqs-queue"
    assert trigger["authenticationRef"]["name"] == the("TriggerAuthentication")["metadata"]["name"]
    assert trigger["metadata"]["queueURL"] == pod_settings()["CHARGE_QUEUE_URL"]
    assert trigger["metadata"]["awsRegion"] == pod_settings()["AWS_REGION"]
    assert trigger["metadata"]["scaleOnInFlight"] == "false"  # ApproximateNumberOfMessages only
    # The floor survives one voluntary disruption.
    assert scaled["minReplicaCount"] - the("PodDisruptionBudget")["spec"]["maxUnavailable"] >= 1


def test_the_autoscaler_does_not_scale_out_while_circuits_are_open() -> None:
    # Issue 22: the backlog counts only while fewer than half the pods have the debit or
    # store circuit open; the formula names both triggers and scales like the queue trigger.
    scaled = the("ScaledObject")["spec"]
    modifiers = scaled["advanced"]["scalingModifiers"]
    assert modifiers["formula"] == "circuit_open >= 0.5 ? 0 : queue_backlog"
    triggers = {t["name"]: t for t in scaled["triggers"]}
    assert modifiers["target"] == triggers["queue_backlog"]["metadata"]["queueLength"]
    assert modifiers["metricType"] == "AverageValue"
    circuit = triggers["circuit_open"]
    assert circuit["type"] == "prometheus"
    query = circuit["metadata"]["query"]
    assert 'ic_circuit_state{job="charge-recovery", dependency=~"debit|store"}' in query
    assert "or vector(0)" in query  # no pod reporting is "no circuit open", not a scaler error


def test_the_replica_count_is_left_to_keda() -> None:
    # `kubectl apply -f deploy/k8s` must not scale a Deployment that KEDA scaled out back down.
    assert "replicas" not in the("Deployment")["spec"]
    assert the("ScaledObject")["spec"]["minReplicaCount"] >= 2


def test_the_stale_claims_check_reads_the_consumer_settings_with_its_own_identity() -> None:
    name = "charge-recovery-stale-claims"
    cron = the("CronJob", name)["spec"]
    pod = cron["jobTemplate"]["spec"]["template"]["spec"]
    (c,) = pod["containers"]
    assert c["args"][:3] == ["list", "--status", "IN_PROGRESS"] and "--fail-if-any" in c["args"]
    assert c["image"] == container()["image"], "the same image as the consumer"
    refs = {e["name"]: e["valueFrom"]["configMapKeyRef"] for e in c["env"]}
    assert all(r["name"] == the("ConfigMap")["metadata"]["name"] and r["key"] == k for k, r in refs.items())
    assert {"AWS_REGION", "IDEMPOTENCY_TABLE", "LEASE_SECONDS"} <= set(refs)
    assert pod["serviceAccountName"] == the("ServiceAccount", name)["metadata"]["name"] != "charge-recovery"
    assert pod["securityContext"] == the("Deployment")["spec"]["template"]["spec"]["securityContext"]
    assert c["securityContext"] == container()["securityContext"]
    assert the("NetworkPolicy", name)["spec"]["podSelector"]["matchLabels"] == pod_labels(cron)
    assert cron["jobTemplate"]["spec"]["backoffLimit"] == 0 and cron["concurrencyPolicy"] == "Forbid"
    # The alert's threshold (2100 s) outlasts two runs: one missed run is not an alert.
    rules = (DEPLOY / "prometheus" / "alerts.yml").read_text()
    assert f'kube_cronjob_status_last_successful_time{{cronjob="{name}"}} > 2100' in rules
    assert cron["schedule"] == "*/15 * * * *"
    policy = json.loads((DEPLOY / "iam-policy-stale-claims.json").read_text())
    assert [s["Action"] for s in policy["Statement"]] == ["dynamodb:Scan"], "Scan only, no writes"


def pod_labels(cron: dict[str, Any]) -> dict[str, str]:
    return {"app.kubernetes.io/name": cron["jobTemplate"]["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/name"]}


def test_pod_runs_as_the_image_user_without_privileges() -> None:
    image_user = re.search(r"^USER (\d+):(\d+)$", (DEPLOY / "Containerfile").read_text(), re.MULTILINE)
    assert image_user, "the Containerfile must set a numeric USER"
    pod = the("Deployment")["spec"]["template"]["spec"]["securityContext"]
    assert pod["runAsNonRoot"] is True
    assert (pod["runAsUser"], pod["runAsGroup"]) == (int(image_user.group(1)), int(image_user.group(2)))
    assert pod["seccompProfile"] == {"type": "RuntimeDefault"}
    assert container()["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "privileged": False,
        "capabilities": {"drop": ["ALL"]},
    }
    assert the("Namespace")["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"


def test_stop_timeouts_outlast_the_drain() -> None:
    pod_grace = the("Deployment")["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
    assert pod_grace >= int(pod_settings()["SHUTDOWN_GRACE_SECONDS"]) + LONG_POLL_SECONDS
    (stop,) = unit_directives()["TimeoutStopSec"]
    assert int(stop.removesuffix("s")) >= int(unit_settings()["SHUTDOWN_GRACE_SECONDS"]) + LONG_POLL_SECONDS


def test_the_unit_sets_the_image_environment() -> None:
    (environment,) = unit_directives()["Environment"]
    assert image_environment(), "deploy/Containerfile sets no ENV"
    assert dict(pair.split("=", 1) for pair in environment.split()) == image_environment()


@pytest.mark.parametrize("source", ["pod", "unit"])
def test_every_setting_is_a_documented_one(source: str) -> None:
    settings = pod_settings() if source == "pod" else unit_settings()
    assert set(settings) <= documented_settings(), set(settings) - documented_settings()
    required = {"AWS_REGION", "CHARGE_QUEUE_URL", "CHARGE_DLQ_URL", "IDEMPOTENCY_TABLE", "CORE_BANKING_URL", "NOTIFICATION_URL"}
    assert required <= set(settings)


def listening_sockets(pid: int) -> set[tuple[str, int]]:
    """(hex local address, port) of the TCP sockets the process's network namespace listens on."""
    out = set()
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            if state == "0A":  # LISTEN
                address, port = local.split(":")
                out.add((address, int(port, 16)))
    return out


def test_consumer_runs_with_the_manifest_settings(charge_stack: ChargeStack, consumers: Consumers, fake_bank: FakeBank) -> None:
    """The pod's own environment, with only the addresses of the local stack swapped in."""
    local = {**charge_stack.env(), **fake_bank.env()}
    env = {**pod_settings(), **{k: v for k, v in local.items() if k in pod_settings() or k.startswith("AWS_")}}
    env["ADMIN_ADDR"] = "0.0.0.0:0"  # the manifest's host; any free port here
    env["LEASE_SECONDS"] = str(charge_stack.lease_seconds)  # the queue's visibility timeout
    consumer = consumers.start(**env)

    port = consumer.started["adminPort"]
    assert ("00000000", port) in listening_sockets(consumer.pid)  # every address of the pod
    assert consumer.get("/health/live")[0] == 200

    charge_stack.send_bodies(['{"schemaVersion":1,"chargeId":"CHG-MANIFEST-1","accountId":"ACC-0012345678",'
                              '"chargeType":"SMS_ALERT_FEE","amountMinor":2500,"currency":"INR","dueDate":"2026-11-30"}'])
    record = charge_stack.final_record("CHG-MANIFEST-1")
    assert (record["state"], record["status"]) == ("DONE", "DEBITED")
    assert consumer.metric("ic_debits_total", result="debited") == 1
    # A receive and a claim succeeded: the readiness probe's path answers 200.
    wait_until(lambda: consumer.get("/health/ready")[0] == 200, timeout=30, description="ready")
