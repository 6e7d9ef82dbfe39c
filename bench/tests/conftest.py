"""Fixtures of the bench's own tests: the release build's bench binaries (make bench-smoke builds
them first), a process manager that stops what a test started, and a fast+fast stack
(bench/fast_aws/ and the bench bank: C++ servers that start in milliseconds)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.stack import Stack
from tools.local_stack import ProcessManager, json_event
from tools.local_stack.emulators import start_fast_aws
from tools.local_stack.paths import REPO_ROOT


@pytest.fixture(scope="session")
def build() -> Path:
    build = Path(os.environ.get("IC_BENCH_BUILD_DIR", REPO_ROOT / "build" / "release")).resolve()
    missing = [name for name in ("ic_bench_net_proxy", "ic_bench_fast_bank", "ic_bench_fast_aws") if not (build / "bench" / name).exists()]
    if missing:  # a failure, not a skip: these tests are the bench's, and need its build
        pytest.fail(f"{', '.join(missing)} not in {build}/bench: run `make release-build` (or set IC_BENCH_BUILD_DIR)")
    return build


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[ProcessManager]:
    manager = ProcessManager(tmp_path / "logs")
    yield manager
    manager.stop_all()


@pytest.fixture
def fast_stack(build: Path, processes: ProcessManager) -> Stack:
    aws = start_fast_aws(processes, build)
    bank = processes.start("fast-bank", [str(build / "bench/ic_bench_fast_bank")], ready=json_event("listening"))
    env = {**aws.env(), "AWS_ENDPOINT_URL_SQS": aws.endpoint_url, "AWS_ENDPOINT_URL_DYNAMODB": aws.endpoint_url}
    return Stack("fast+fast", build, processes, env, f"http://127.0.0.1:{bank.ready_info['port']}",
                 {"SQS+DynamoDB fast": aws.process.pid, "bank": bank.pid})
