"""Handles for the emulators beside moto: ElasticMQ (SQS, tools.elasticmq_server, jars in
build/elasticmq) and dynalite (DynamoDB, tools/dynalite/server.js), both installed by
scripts/install-deps.sh, and the bench's in-memory SQS + DynamoDB (bench/fast_aws/, a
release-build binary; the bench's backend, not an emulator the tests use). Each starts on a
free port and is ready once it printed its "listening" line (ElasticMQ's launcher prints it
only after ListQueues answers)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tools.local_stack.aws_endpoint import DEFAULT_REGION, AwsEndpoint
from tools.local_stack.paths import PYTHON, REPO_ROOT
from tools.local_stack.processes import ManagedProcess, ProcessManager, json_event

ELASTICMQ_LAUNCHER = "tools.elasticmq_server"  # a module, run from the repository root
DYNALITE_SERVER = REPO_ROOT / "tools" / "dynalite" / "server.js"


@dataclass
class Emulator(AwsEndpoint):
    """A running emulator of one service ("sqs" or "dynamodb")."""

    kind: str  # "elasticmq" or "dynalite"
    process: ManagedProcess
    endpoint_url: str
    region: str = DEFAULT_REGION


def start_elasticmq(manager: ProcessManager, name: str = "elasticmq") -> Emulator:
    proc = manager.start(name, [PYTHON, "-m", ELASTICMQ_LAUNCHER, "--log-level=warning"], ready=json_event("listening"), timeout=90.0)
    return Emulator("elasticmq", proc, f"http://127.0.0.1:{proc.ready_info['port']}")


def start_dynalite(manager: ProcessManager, name: str = "dynalite") -> Emulator:
    proc = manager.start(name, ["node", str(DYNALITE_SERVER)], ready=json_event("listening"), timeout=30.0)
    return Emulator("dynalite", proc, f"http://127.0.0.1:{proc.ready_info['port']}")


def start_fast_aws(manager: ProcessManager, build: Path, name: str = "fast-aws") -> Emulator:
    """bench/fast_aws/ from the build tree `build` (the release build): SQS and DynamoDB on
    one port, so the same handle serves both roles."""
    proc = manager.start(name, [str(build / "bench" / "ic_bench_fast_aws")], ready=json_event("listening"), timeout=10.0)
    return Emulator("fast", proc, f"http://127.0.0.1:{proc.ready_info['port']}")
