"""pytest plugin of the local stack: moto server and fake bank (one process each per session,
reset before every test), per-test process management, the charge-recovery stack, and the
log tails of every live process in the report of a failing test.

    def test_x(moto, fake_bank, processes): ...
    def test_y(charge_stack, consumers): ...

`moto` / `fake_bank` reset their server and return the handle (MotoServer / FakeBank);
`processes` is a ProcessManager whose processes are stopped when the test ends, pass or
fail; `charge_stack` is a fresh table and queues made by `charge-recovery provision`;
`consumers` starts `charge-recovery run` processes on them. Logs of every process are under
pytest's tmp dir.

A plugin rather than a conftest.py so the fixtures live next to the machinery they wrap and
any test directory can load them: tests/system/conftest.py does it with
`pytest_plugins = ["tools.local_stack.pytest_plugin"]` (or pass
`-p tools.local_stack.pytest_plugin`). pytest must run from the repository root (as
scripts/run-pytest.sh does) or with the `pythonpath` setting of pyproject.toml, so that
`tools` is importable.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tools.local_stack.charge_recovery import ChargeStack, Consumers, provision_stack
from tools.local_stack.emulators import Emulator, start_dynalite, start_elasticmq
from tools.local_stack.fake_bank import FakeBank, start_fake_bank
from tools.local_stack.moto import MotoServer, start_moto
from tools.local_stack.processes import ProcessManager, live_processes


@pytest.fixture(scope="session")
def session_processes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessManager]:
    """Processes that live for the whole session (the shared moto and fake bank)."""
    manager = ProcessManager(tmp_path_factory.mktemp("stack-logs"))
    try:
        yield manager
    finally:
        manager.stop_all()


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[ProcessManager]:
    """Processes started by one test; all stopped at its teardown."""
    manager = ProcessManager(tmp_path / "logs")
    try:
        yield manager
    finally:
        manager.stop_all()


@pytest.fixture(scope="session")
def moto_server(session_processes: ProcessManager) -> MotoServer:
    """One moto per session: it takes about a second to start; `moto` resets it per test.

    Through tools/moto_server.py, never plain moto: the tests count messages and claims, which
    is only evidence if DynamoDB's conditional writes are atomic and SQS loses no send or
    delete under concurrent requests (both are the launcher's locks)."""
    return start_moto(session_processes)


@pytest.fixture
def moto(moto_server: MotoServer) -> MotoServer:
    """The session's moto server (DynamoDB lock on), emptied before the test."""
    moto_server.reset()
    return moto_server


@pytest.fixture(scope="session")
def fake_bank_server(session_processes: ProcessManager) -> FakeBank:
    """One fake bank per session (seed 1234); `fake_bank` resets it per test."""
    return start_fake_bank(session_processes)


@pytest.fixture
def fake_bank(fake_bank_server: FakeBank) -> FakeBank:
    """The session's fake bank with an empty ledger, no faults and its seed restored."""
    fake_bank_server.reset()
    return fake_bank_server


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    """A failure in set-up or in the test shows the log tail of every process still running
    (its stdout and stderr went to files, so nothing else would show them)."""
    outcome = yield
    report = outcome.get_result()
    if report.failed and call.when in ("setup", "call"):
        for proc in live_processes():
            report.sections.append((f"process {proc.name} (pid {proc.pid})", proc.log_tail(30)))


# --- the charge-recovery binary (tools/local_stack/charge_recovery.py) ---------------------


@pytest.fixture
def charge_stack(moto: MotoServer) -> ChargeStack:
    """A fresh table and queues made by `charge-recovery provision` (lease 3 s)."""
    return provision_stack(moto, lease_seconds=3)


@pytest.fixture
def consumers(processes: ProcessManager, charge_stack: ChargeStack, fake_bank: FakeBank) -> Iterator[Consumers]:
    """Factory of `charge-recovery run` processes on `charge_stack` and `fake_bank`:
    `consumers.start(WORKERS="4")`. At teardown every consumer still running gets SIGTERM, and
    every consumer stopped by SIGTERM (here or in the test) must have exited 0."""
    factory = Consumers(processes, charge_stack, fake_bank)
    yield factory
    exit_codes = factory.stop_all()
    assert all(code == 0 for code in exit_codes.values()), f"consumer exit codes after SIGTERM: {exit_codes}"


# --- ElasticMQ and dynalite (tools/local_stack/emulators.py), one each per session ------------


@pytest.fixture(scope="session")
def elasticmq(session_processes: ProcessManager) -> Emulator:
    """One ElasticMQ per session (a few seconds to start); tests use queues of their own names."""
    return start_elasticmq(session_processes)


@pytest.fixture(scope="session")
def dynalite(session_processes: ProcessManager) -> Emulator:
    """One dynalite per session; tests use tables of their own names."""
    return start_dynalite(session_processes)
