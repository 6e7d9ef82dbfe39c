"""Issue 23 item 4: the TLS path to AWS. SQS, DynamoDB and STS (web identity, as under IRSA)
are moto behind one TLS-terminating proxy each (tools/local_stack/tls_proxy.py), and the bank
serves HTTPS itself, all with certificates of one test CA (tools/fake_bank/pki.py). With
AWS_CA_BUNDLE and BANK_TLS_CA_FILE naming that CA the consumer debits; without AWS_CA_BUNDLE
every AWS handshake is refused by the consumer and it fails cleanly: it stays up, is not ready,
and says why once (docs/design.md §6, "HTTPS").
"""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest

from charges import charge, charge_body
from tools.fake_bank.pki import Pki, make_pki
from tools.local_stack.aws_endpoint import keyless_env
from tools.local_stack.charge_recovery import ChargeStack, Consumers
from tools.local_stack.fake_bank import FakeBank, start_fake_bank
from tools.local_stack.processes import ProcessManager, wait_until
from tools.local_stack.tls_proxy import TlsProxy

pytestmark = pytest.mark.timeout(60)

SERVICES = ("SQS", "DYNAMODB", "STS")


@pytest.fixture
def pki(tmp_path: Path) -> Pki:
    return make_pki(tmp_path / "pki")


@pytest.fixture
def https_aws(charge_stack: ChargeStack, pki: Pki) -> Iterator[dict[str, TlsProxy]]:
    """One proxy per service, so each one's handshakes prove that service went over TLS."""
    port = int(charge_stack.moto.endpoint_url.rsplit(":", 1)[1])
    proxies = {name: TlsProxy("127.0.0.1", port, pki.server_cert, pki.server_key) for name in SERVICES}
    yield proxies
    for proxy in proxies.values():
        proxy.close()


@pytest.fixture
def https_bank(processes: ProcessManager, pki: Pki) -> FakeBank:
    args = ["--tls-cert", str(pki.server_cert), "--tls-key", str(pki.server_key)]
    return start_fake_bank(processes, extra_args=args, name="https-bank", tls=ssl.create_default_context(cafile=str(pki.ca)))


@pytest.fixture
def https_consumers(processes: ProcessManager, charge_stack: ChargeStack, https_bank: FakeBank) -> Iterator[Consumers]:
    factory = Consumers(processes, charge_stack, https_bank)
    yield factory
    exit_codes = factory.stop_all()
    assert all(code == 0 for code in exit_codes.values()), exit_codes


def https_env(stack: ChargeStack, proxies: dict[str, TlsProxy], pki: Pki, home: Path) -> dict[str, str]:
    """Web identity (no static keys), every AWS endpoint https, the bank's CA configured."""
    token = home / "token"
    token.write_text("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQifQ.c2ln\n")
    env = keyless_env(stack.env(), home)
    env |= {f"AWS_ENDPOINT_URL_{name}": proxy.url for name, proxy in proxies.items()}
    env |= {
        "AWS_ENDPOINT_URL": "",
        "AWS_WEB_IDENTITY_TOKEN_FILE": str(token),
        "AWS_ROLE_ARN": "arn:aws:iam::123456789012:role/charge-recovery",
        "AWS_ROLE_SESSION_NAME": "tls-test",
        "BANK_TLS_CA_FILE": str(pki.ca),
        "PROBE_INTERVAL_SECONDS": "1",
    }
    return env


def test_every_dependency_over_https_with_the_test_ca(
    https_consumers: Consumers, https_aws: dict[str, TlsProxy], https_bank: FakeBank, pki: Pki, tmp_path: Path
) -> None:
    stack = https_consumers.stack
    env = https_env(stack, https_aws, pki, tmp_path) | {"AWS_CA_BUNDLE": str(pki.ca)}
    consumer = https_consumers.start(**env)
    events = [charge(f"CHG-20261203-0009{i:02d}") for i in range(3)]
    stack.send_bodies([charge_body(e) for e in events])
    for event in events:
        assert stack.final_record(event["chargeId"])["status"] == "DEBITED"
    assert sorted(d["chargeId"] for d in https_bank.ledger()["debits"]) == sorted(e["chargeId"] for e in events)
    wait_until(lambda: consumer.get("/health/ready")[0] == 200, timeout=10, description="ready")
    assert {name: proxy.refused for name, proxy in https_aws.items()} == {name: 0 for name in SERVICES}
    assert all(proxy.handshakes >= 1 for proxy in https_aws.values()), {n: p.handshakes for n, p in https_aws.items()}


def test_without_the_ca_bundle_it_fails_cleanly(
    https_consumers: Consumers, https_aws: dict[str, TlsProxy], https_bank: FakeBank, pki: Pki, tmp_path: Path
) -> None:
    """The system trust store (AWS_CA_BUNDLE empty = unset) does not know the test CA: STS's
    certificate is refused, so there are no credentials and nothing reaches SQS or DynamoDB.
    The consumer stays up and not ready, says why in the readiness answer and once per
    dependency in its log, and the waiting charge is neither debited nor moved."""
    stack = https_consumers.stack
    stack.send_bodies([charge_body(charge("CHG-20261203-000999"))])
    consumer = https_consumers.start(**https_env(stack, https_aws, pki, tmp_path), AWS_CA_BUNDLE="")
    wait_until(lambda: https_aws["STS"].refused >= 3, timeout=15, description="three probes refused")
    status, body = consumer.get("/health/ready")
    assert status == 503 and "unable to get local issuer certificate" in body, body
    assert consumer.process.alive(), "it stays up, waiting for the trust store to be fixed"

    cause = "SSL certificate problem: unable to get local issuer certificate"
    warnings = [line for line in consumer.logs() if line["level"] in ("warn", "error")]
    assert any(cause in str(line.get("detail", "")) for line in warnings), warnings
    down = [line.get("dependency") for line in warnings if line["msg"] == "dependency down"]
    assert sorted(down) == sorted(set(down)), f"said once per dependency, not per probe: {down}"
    assert "ready" not in [line["msg"] for line in consumer.logs()]
    assert https_bank.ledger()["debits"] == []
    assert (stack.depth(), stack.visible()) == (1, 1), "the charge still waits, never received"
