"""Handle for a moto server (SQS + DynamoDB emulator) started through tools.moto_server,
the launcher that serialises DynamoDB requests: boto3 clients for it, its reset endpoint,
and the environment a child process (the consumer, `charge-recovery provision`) needs to
talk to it.

The launcher runs as a module (`python -m tools.moto_server`, from the repository root), as the
C++ tests start it, so there is one way to run it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tools.local_stack.aws_endpoint import DEFAULT_REGION, AwsEndpoint
from tools.local_stack.http_json import http_request
from tools.local_stack.paths import PYTHON
from tools.local_stack.processes import ManagedProcess, ProcessManager, json_event

MOTO_LAUNCHER = "tools.moto_server"  # a module, run from the repository root


@dataclass
class MotoServer(AwsEndpoint):
    """A running tools/moto_server.py; boto3 clients use dummy credentials (moto accepts any
    key unless INITIAL_NO_AUTH_ACTION_COUNT turns authentication on)."""

    process: ManagedProcess
    endpoint_url: str
    dynamodb_lock: bool
    region: str = DEFAULT_REGION
    enforce_iam_gaps: bool = False

    def reset(self) -> None:
        response = http_request(self.endpoint_url, "POST", "/moto-api/reset")
        if response.status != 200:
            raise RuntimeError(f"moto reset answered {response.status}: {response.body}")


def start_moto(
    manager: ProcessManager,
    *,
    dynamodb_lock: bool = True,
    sqs_lock: bool = True,
    enforce_iam_gaps: bool = False,
    env: Mapping[str, str | None] | None = None,
    name: str = "moto",
) -> MotoServer:
    """Start tools/moto_server.py on a free port and wait for its "listening" line.

    `dynamodb_lock=False` passes --no-dynamodb-lock (plain, racy moto: negative controls
    only); `sqs_lock=False` passes --no-sqs-lock likewise. `enforce_iam_gaps=True` passes --enforce-iam-gaps, which only matters once `env`
    turns authentication on with INITIAL_NO_AUTH_ACTION_COUNT (see tools/moto_server.py).
    """
    argv = [PYTHON, "-m", MOTO_LAUNCHER, "--port", "0"]
    if not dynamodb_lock:
        argv.append("--no-dynamodb-lock")
    if not sqs_lock:
        argv.append("--no-sqs-lock")
    if enforce_iam_gaps:
        argv.append("--enforce-iam-gaps")
    proc = manager.start(name, argv, env=env, ready=json_event("listening"), timeout=30.0)
    return MotoServer(
        proc, f"http://127.0.0.1:{proc.ready_info['port']}", dynamodb_lock, enforce_iam_gaps=enforce_iam_gaps
    )
