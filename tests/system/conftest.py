"""Fixtures of the system tests: moto server and fake-bank (one process each per session,
reset before every test), per-test process management, and log tails on failure.

    def test_x(moto, fake_bank, processes): ...

`moto` / `fake_bank` reset their server and return the handle (stack.MotoServer /
stack.FakeBank); `processes` is a ProcessManager whose processes are stopped when the test
ends, pass or fail. Logs of every process are under pytest's tmp dir; a failing test's
report shows their tails.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from charge_stack import ChargeStack, Consumers, provision_stack
from stack import (
    FakeBank,
    MotoServer,
    ProcessManager,
    live_processes,
    start_fake_bank,
    start_moto,
)


@pytest.fixture(scope="session")
def session_processes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessManager]:
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
    return start_moto(session_processes)


@pytest.fixture
def moto(moto_server: MotoServer) -> MotoServer:
    """The session's moto server (DynamoDB lock on), emptied before the test."""
    moto_server.reset()
    return moto_server


@pytest.fixture(scope="session")
def fake_bank_server(session_processes: ProcessManager) -> FakeBank:
    return start_fake_bank(session_processes)


@pytest.fixture
def fake_bank(fake_bank_server: FakeBank) -> FakeBank:
    """The session's fake bank with an empty ledger, no faults and its seed restored."""
    fake_bank_server.reset()
    return fake_bank_server


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    outcome = yield
    report = outcome.get_result()
    if report.failed and call.when in ("setup", "call"):
        for proc in live_processes():
            report.sections.append((f"process {proc.name} (pid {proc.pid})", proc.log_tail(30)))


# --- the charge-recovery binary (tests/system/charge_stack.py) -----------------------------


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
