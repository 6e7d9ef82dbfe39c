"""The binary's credential chain with no static keys anywhere (docs/design.md §4): IRSA-style
web identity through moto's STS, and a profile's credential_process. `status` of an unknown
charge exits 3 only after a signed DynamoDB read succeeded, and 1 when no credentials were
found, so the exit code tells which happened; each test has the negative control.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tools.local_stack.aws_endpoint import keyless_env
from tools.local_stack.charge_recovery import ChargeStack, run_cli

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
