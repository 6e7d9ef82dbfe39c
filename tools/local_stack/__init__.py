"""The local stack as a library: moto (SQS + atomic DynamoDB, tools/moto_server.py), the fake
bank (tools/fake_bank) and the `charge-recovery` binary started as child processes on free
ports, with handles to drive and inspect them.

It is one package, not helpers inside tests/, because three kinds of callers start the same
stack: the system tests (through the pytest plugin, tools/local_stack/pytest_plugin.py), the
demo (`python -m scripts.demo`) and the throughput benchmark (`python -m
bench.consumer_throughput`). All of them run from the repository root, which makes `tools`
importable with no import-path edits.

Modules: paths (repository, interpreter, build directory), processes (ProcessManager,
readiness waits, wait_until), http_json (stdlib JSON requests), moto (MotoServer,
start_moto), fake_bank (FakeBank, start_fake_bank), charge_recovery (the binary: provision,
CLI, consumers), pytest_plugin (fixtures; imported only by pytest).
"""

from tools.local_stack.charge_recovery import (
    WAKE_BODY,
    ChargeStack,
    Consumer,
    Consumers,
    binary,
    binary_path,
    provision_stack,
    run_cli,
)
from tools.local_stack.fake_bank import FakeBank, start_fake_bank
from tools.local_stack.http_json import HttpResponse, http_request
from tools.local_stack.moto import MotoServer, start_moto
from tools.local_stack.paths import PYTHON, REPO_ROOT, build_dir
from tools.local_stack.processes import (
    ManagedProcess,
    ProcessFailed,
    ProcessManager,
    http_ok,
    json_event,
    line_matching,
    live_processes,
    wait_until,
)

__all__ = [
    "PYTHON",
    "REPO_ROOT",
    "WAKE_BODY",
    "ChargeStack",
    "Consumer",
    "Consumers",
    "FakeBank",
    "HttpResponse",
    "ManagedProcess",
    "MotoServer",
    "ProcessFailed",
    "ProcessManager",
    "binary",
    "binary_path",
    "build_dir",
    "http_ok",
    "http_request",
    "json_event",
    "line_matching",
    "live_processes",
    "provision_stack",
    "run_cli",
    "start_fake_bank",
    "start_moto",
    "wait_until",
]
