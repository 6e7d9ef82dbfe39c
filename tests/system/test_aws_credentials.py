"""The binary's credential chain with no static keys anywhere (docs/design.md §4): IRSA-style
web identity through moto's STS, and a profile's credential_process. `status` of an unknown
charge exits 3 only after a signed DynamoDB read succeeded, and 1 when no credentials were
found, so the exit code tells which happened; each test has the negative control. And issue
34's slow container endpoint: `run` keeps debiting on the cached keys while every refresh
times out, and goes on with expired ones (static stability).
"""

from __future__ import annotations

import json
import os
import stat
import threading
import time
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

from tools.local_stack.aws_endpoint import keyless_env
from charges import charge, charge_body
from tools.local_stack.charge_recovery import ChargeStack, Consumers, run_cli
from tools.local_stack.processes import wait_until

pytestmark = pytest.mark.timeout(60)

NOT_FOUND = 3


def test_web_identity_token_file_and_role_are_enough(charge_stack: ChargeStack, tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQifQ.c2ln\n")
    env = keyless_env(charge_stack.env(), tmp_path)
    env |= {
        "AWS_WEB_IDENTITY_TOKEN_FILE": str(token),
        "AWS_ROLE_ARN": "arn:aws:iam::123456789012:role/charge-recovery",
        "AWS_ROLE_SESSION_NAME": "system-test",
    }
    done = run_cli(["status", "CHG-NOT-THERE"], env)
    assert done.returncode == NOT_FOUND, done.stderr

    env["AWS_ROLE_ARN"] = ""
    done = run_cli(["status", "CHG-NOT-THERE"], env)
    assert done.returncode == 1, done.stderr
    assert "web-identity" in done.stderr and "must be set together" in done.stderr


def test_credential_process_of_the_profile(charge_stack: ChargeStack, tmp_path: Path) -> None:
    helper = tmp_path / "bin" / "creds"
    helper.parent.mkdir()
    helper.write_text(
        "#!/bin/sh\n"
        '[ "$1" = "--account" ] && [ "$2" = "test account" ] || { echo "bad arguments" >&2; exit 4; }\n'
        'echo \'{"Version": 1, "AccessKeyId": "AKIDPROCESS", "SecretAccessKey": "process-secret"}\'\n'
    )
    os.chmod(helper, stat.S_IRWXU)
    config = tmp_path / ".aws" / "config"
    config.parent.mkdir()
    config.write_text(f'[profile ops]\ncredential_process = {helper} --account "test account"\n')
    env = keyless_env(charge_stack.env(), tmp_path) | {"AWS_PROFILE": "ops"}
    done = run_cli(["status", "CHG-NOT-THERE"], env)
    assert done.returncode == NOT_FOUND, done.stderr

    config.write_text(f"[profile ops]\ncredential_process = {helper} --account other\n")
    done = run_cli(["status", "CHG-NOT-THERE"], env)
    assert done.returncode == 1, done.stderr
    assert "exited with status 4: bad arguments" in done.stderr
    assert "process-secret" not in done.stderr


# The keys live 40 s from each fetch, so the refresh falls due 20 s after it (half the life).
LIFETIME_SECONDS = 40


class SlowContainerEndpoint:
    """AWS_CONTAINER_CREDENTIALS_FULL_URI on loopback: answers the first fetch at once, then
    after `delay` seconds, beyond the providers' 3 s metadata timeout."""

    def __init__(self, delay: float) -> None:
        self.fetches = 0
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                endpoint.fetches += 1
                if endpoint.fetches > 1:
                    time.sleep(delay)
                expiration = datetime.now(timezone.utc) + timedelta(seconds=LIFETIME_SECONDS)
                body = json.dumps({"AccessKeyId": "ASIACONTAINER", "SecretAccessKey": "container-secret",
                                   "Token": "container-token", "Expiration": expiration.strftime("%Y-%m-%dT%H:%M:%SZ")})
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    self.wfile.write(body.encode())
                except OSError:
                    pass  # the client gave up at its timeout

            def log_message(self, *_: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/creds"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def slow_container() -> Iterator[SlowContainerEndpoint]:
    endpoint = SlowContainerEndpoint(delay=4.0)
    yield endpoint
    endpoint.close()


@pytest.mark.timeout(120)
def test_debits_go_on_while_the_container_endpoint_is_too_slow_to_refresh(
    charge_stack: ChargeStack, consumers: Consumers, slow_container: SlowContainerEndpoint, tmp_path: Path
) -> None:
    env = keyless_env(consumers.env(), tmp_path) | {"AWS_CONTAINER_CREDENTIALS_FULL_URI": slow_container.url}
    consumer = consumers.start(**env)
    assert consumer.started["awsIdentitySource"] == "container"

    def failures() -> float:
        return consumer.metric("ic_credentials_refreshes_total", result="failure")

    wait_until(lambda: failures() >= 1, timeout=LIFETIME_SECONDS, interval=0.2, description="a refresh timed out")
    # Refreshes keep failing on the refresher's thread; the loop signs with the cached keys.
    events = [charge(f"CHG-SLOWCREDS-{i:02d}") for i in range(20)]
    charge_stack.send_bodies(charge_body(e) for e in events)
    for event in events:
        assert charge_stack.final_record(event["chargeId"])["state"] == "DONE"
    left = consumer.metric("ic_credentials_expiry_seconds")
    assert left > 0, f"all debited only after the cached keys expired ({left} s)"
    assert consumer.metric("ic_credentials_refreshes_total", result="success") == 1
    assert consumer.logged("AWS credentials refresh failed", code="CredentialsFetchFailed")
    status, body = consumer.get("/health/ready")
    assert status == 200 and json.loads(body)["checks"]["credentials"]["detail"] == "valid", body

    # Past expiry with the endpoint still too slow: container keys are served expired, and
    # readiness says so.
    wait_until(lambda: consumer.metric("ic_credentials_expiry_seconds") < 0, timeout=LIFETIME_SECONDS,
               interval=0.5, description="the cached keys expired")
    late = charge("CHG-SLOWCREDS-LATE")
    charge_stack.send_body(charge_body(late))
    assert charge_stack.final_record(late["chargeId"])["state"] == "DONE"
    status, body = consumer.get("/health/ready")
    check = json.loads(body)["checks"]["credentials"]
    assert status == 200 and check == {"ok": True, "detail": "expired, served while the endpoint is unreachable"}, body
    assert "container-secret" not in "".join(json.dumps(line) for line in consumer.logs())
