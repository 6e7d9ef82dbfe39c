"""Core-banking and notification authentication end to end (docs/design.md §5): the real
binary against a fake bank that serves HTTPS with a throwaway CA made here, requires a client
certificate that CA signed (mutual TLS) and a bearer token read from a file. A wrong or
missing certificate or token is a definite refusal: the debit is DebitMisconfigured (counted
`misconfigured`, never recorded FAILED) and the message ends in the DLQ through
maxReceiveCount instead of being retried forever. A rotated token file is picked up without a
restart. Unreadable setting files stop start-up with one line and exit 2.
"""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest

from charges import charge, charge_body
from tools.fake_bank.pki import Pki, make_pki
from tools.local_stack.charge_recovery import Consumers, provision_stack, run_cli
from tools.local_stack.fake_bank import FakeBank, start_fake_bank
from tools.local_stack.moto import MotoServer
from tools.local_stack.processes import ProcessManager

pytestmark = pytest.mark.timeout(120)

BANK_TOKEN = "bank-token-v1.SECRET"


@pytest.fixture
def pki(tmp_path: Path) -> Pki:
    return make_pki(tmp_path / "pki")


@pytest.fixture
def bank_token_file(tmp_path: Path) -> Path:
    """What the bank accepts; a test rotates it by rewriting the file."""
    path = tmp_path / "bank-accepts"
    path.write_text(BANK_TOKEN + "\n")
    return path


@pytest.fixture
def our_token_file(tmp_path: Path) -> Path:
    """What the consumer sends (CORE_BANKING_TOKEN_FILE and NOTIFICATION_TOKEN_FILE)."""
    path = tmp_path / "token"
    path.write_text(BANK_TOKEN + "\n")
    return path


@pytest.fixture
def secure_bank(processes: ProcessManager, pki: Pki, bank_token_file: Path) -> FakeBank:
    tls = ssl.create_default_context(cafile=str(pki.ca))
    tls.load_cert_chain(str(pki.client_cert), str(pki.client_key))
    args = ["--tls-cert", str(pki.server_cert), "--tls-key", str(pki.server_key)]
    args += ["--tls-client-ca", str(pki.ca), "--token-file", str(bank_token_file)]
    return start_fake_bank(processes, extra_args=args, name="secure-bank", tls=tls)


@pytest.fixture
def secure_consumers(processes: ProcessManager, moto: MotoServer, secure_bank: FakeBank):  # type: ignore[no-untyped-def]
    """Consumers on a stack whose messages dead-letter after two receives."""
    factory = Consumers(processes, provision_stack(moto, lease_seconds=3, max_receive_count=2), secure_bank)
    yield factory
    exit_codes = factory.stop_all()
    assert all(code == 0 for code in exit_codes.values()), exit_codes


def auth_env(pki: Pki, token: Path, cert: Path | None = None, key: Path | None = None) -> dict[str, str]:
    env = {
        "CORE_BANKING_TOKEN_FILE": str(token),
        "NOTIFICATION_TOKEN_FILE": str(token),
        "BANK_TLS_CA_FILE": str(pki.ca),
    }
    if cert is not None and key is not None:
        env |= {"BANK_TLS_CERT_FILE": str(cert), "BANK_TLS_KEY_FILE": str(key)}
    return env


def test_right_certificate_and_token_debit_and_notify(
    secure_consumers: Consumers, secure_bank: FakeBank, pki: Pki, our_token_file: Path
) -> None:
    consumer = secure_consumers.start(**auth_env(pki, our_token_file, pki.client_cert, pki.client_key))
    event = charge("CHG-20261130-000701")
    secure_consumers.stack.send_bodies([charge_body(event)])
    record = secure_consumers.stack.final_record(event["chargeId"])
    assert record["status"] == "DEBITED"
    ledger = secure_bank.ledger()
    assert [d["chargeId"] for d in ledger["debits"]] == [event["chargeId"]]
    assert [n["chargeId"] for n in ledger["notifications"]] == [event["chargeId"]]
    assert consumer.metric("ic_debits_total", result="debited") == 1
    assert all(BANK_TOKEN not in str(line) for line in consumer.logs())


def test_rotated_token_file_is_used_without_restart(
    secure_consumers: Consumers, secure_bank: FakeBank, pki: Pki, our_token_file: Path, bank_token_file: Path
) -> None:
    consumer = secure_consumers.start(**auth_env(pki, our_token_file, pki.client_cert, pki.client_key))
    first = charge("CHG-20261130-000711")
    secure_consumers.stack.send_bodies([charge_body(first)])
    assert secure_consumers.stack.final_record(first["chargeId"])["status"] == "DEBITED"

    # The secret is rotated: the bank accepts only the new token, then our file follows.
    bank_token_file.write_text("bank-token-v2.SECRET\n")
    our_token_file.write_text("bank-token-v2.SECRET\n")
    second = charge("CHG-20261130-000712")
    secure_consumers.stack.send_bodies([charge_body(second)])
    assert secure_consumers.stack.final_record(second["chargeId"])["status"] == "DEBITED"
    assert consumer.process.alive()
    assert consumer.metric("ic_debits_total", result="debited") == 2
    assert consumer.metric("ic_debits_total", result="misconfigured") == 0
    # The watchers check the file every second: a call sent before its watcher saw the change
    # is refused once (401) and sent again with the re-read token, never misconfigured; at most
    # one such call per API (the debit's and the notification's token files are watched apart).
    assert secure_bank.ledger()["stats"]["unauthorized"] <= 2


@pytest.mark.parametrize("problem", ["wrong token", "no client certificate", "untrusted client certificate"])
def test_refused_credentials_are_misconfigured_and_dead_lettered(
    secure_consumers: Consumers, secure_bank: FakeBank, pki: Pki, our_token_file: Path, problem: str
) -> None:
    cert, key = pki.client_cert, pki.client_key
    if problem == "wrong token":
        our_token_file.write_text("stale-token\n")
    elif problem == "no client certificate":
        cert = key = None  # type: ignore[assignment]
    else:
        cert, key = pki.rogue_cert, pki.rogue_key
    consumer = secure_consumers.start(**auth_env(pki, our_token_file, cert, key))
    event = charge("CHG-20261130-000721")
    secure_consumers.stack.send_bodies([charge_body(event)])

    # Not retried forever: after maxReceiveCount (2) deliveries SQS moves it to the DLQ.
    secure_consumers.stack.dead_letters(1, timeout=60)
    assert consumer.metric("ic_debits_total", result="misconfigured") >= 2
    assert consumer.metric("ic_debits_total", result="unavailable") == 0
    record = secure_consumers.stack.record(event["chargeId"])
    assert record is not None and record["state"] == "IN_PROGRESS"  # released, never FAILED
    assert secure_bank.ledger()["debits"] == []
    assert all("stale-token" not in str(line) for line in consumer.logs())


@pytest.mark.parametrize(
    "setting",
    ["CORE_BANKING_TOKEN_FILE", "NOTIFICATION_TOKEN_FILE", "BANK_TLS_CERT_FILE", "BANK_TLS_KEY_FILE", "BANK_TLS_CA_FILE"],
)
def test_unreadable_file_setting_stops_start_up(moto: MotoServer, pki: Pki, our_token_file: Path, setting: str) -> None:
    env = {
        **moto.env(),
        **auth_env(pki, our_token_file, pki.client_cert, pki.client_key),
        "CHARGE_QUEUE_URL": "http://127.0.0.1:1/q",
        "CHARGE_DLQ_URL": "http://127.0.0.1:1/dlq",
        "IDEMPOTENCY_TABLE": "t",
        "CORE_BANKING_URL": "https://127.0.0.1:1",
        "NOTIFICATION_URL": "https://127.0.0.1:1",
        setting: "/nonexistent/ic-auth-file",
    }
    done = run_cli(["run"], env, timeout=30)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"configuration error: {setting}: cannot be read"), lines


def test_empty_token_file_and_half_a_key_pair_stop_start_up(moto: MotoServer, pki: Pki, tmp_path: Path) -> None:
    empty = tmp_path / "empty-token"
    empty.write_text("\n")
    base = {
        **moto.env(),
        "CHARGE_QUEUE_URL": "http://127.0.0.1:1/q",
        "CHARGE_DLQ_URL": "http://127.0.0.1:1/dlq",
        "IDEMPOTENCY_TABLE": "t",
        "CORE_BANKING_URL": "https://127.0.0.1:1",
        "NOTIFICATION_URL": "https://127.0.0.1:1",
    }
    done = run_cli(["run"], {**base, "CORE_BANKING_TOKEN_FILE": str(empty)}, timeout=30)
    assert done.returncode == 2 and done.stderr.startswith("configuration error: CORE_BANKING_TOKEN_FILE: is empty"), done.stderr
    done = run_cli(["run"], {**base, "BANK_TLS_CERT_FILE": str(pki.client_cert)}, timeout=30)
    assert done.returncode == 2 and "BANK_TLS_KEY_FILE" in done.stderr, done.stderr



def test_renotify_authenticates_like_the_consumer(
    secure_consumers: Consumers, secure_bank: FakeBank, pki: Pki, our_token_file: Path
) -> None:
    """`renotify` reads NOTIFICATION_TOKEN_FILE and BANK_TLS_*: without them the bank refuses
    it (an audited failed attempt, exit 5); with them the notification goes out."""
    env = auth_env(pki, our_token_file, pki.client_cert, pki.client_key)
    secure_consumers.start(**env)
    secure_bank.set_faults(notificationFailureRate=1.0)
    event = charge("CHG-20261130-000731")
    secure_consumers.stack.send_bodies([charge_body(event)])
    record = secure_consumers.stack.final_record(event["chargeId"])
    assert record["status"] == "DEBITED_NOTIFICATION_FAILED"
    secure_bank.set_faults()

    base = {**secure_consumers.stack.env(), **secure_bank.env()}
    anonymous = run_cli(["renotify", event["chargeId"]], {**base, "BANK_TLS_CA_FILE": str(pki.ca)})
    assert anonymous.returncode == 5, (anonymous.stdout, anonymous.stderr)
    assert secure_consumers.stack.record(event["chargeId"])["status"] == "DEBITED_NOTIFICATION_FAILED"

    sent = run_cli(["renotify", event["chargeId"]], {**base, **env})
    assert sent.returncode == 0, (sent.stdout, sent.stderr)
    assert secure_consumers.stack.record(event["chargeId"])["status"] == "DEBITED"
    assert [n["chargeId"] for n in secure_bank.ledger()["notifications"]] == [event["chargeId"]]
    assert BANK_TOKEN not in sent.stdout + sent.stderr
