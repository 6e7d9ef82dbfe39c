"""Long outages (issue 22): the bank or the idempotency store away for many leases must park
the work, not burn it into the DLQ. The local stack with a 5 s lease and maxReceiveCount 5,
the consumer's circuits set to probe at most every CIRCUIT_PROBE_MAX_MS. The fake bank's
attempt log (GET /admin/attempts, timed on arrival by the bank's own clock) is the proof of
what reached the bank; the consumer's "circuit opened"/"circuit closed" log lines say when
its debit circuit was open. Every wait polls with a deadline.

The figures each test measures (attempts while open against their bound, the drain time, the
Retry-After gap) are printed on one `outage-figures` line (pytest -s, or the captured output
of a failure), for the issue's closing note.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from charges import charge, charge_body
from tools.chaos.history import parse_ts
from tools.local_stack.charge_recovery import ChargeStack, Consumer, Consumers, provision_stack
from tools.local_stack.fake_bank import FakeBank
from tools.local_stack.moto import MotoServer
from tools.local_stack.processes import ProcessManager, wait_until
from tools.local_stack.tcp_proxy import TcpProxy

LEASE_S = 5
MAX_RECEIVE_COUNT = 5
WORKERS = 8
PROBE_MIN_MS = 1000
PROBE_MAX_MS = 2000
# Probes while open, as the contract schedules them: the n-th delay is
# min(PROBE_MIN_MS * 2^n, PROBE_MAX_MS) with equal jitter, so never below half of that.
CIRCUIT_ENV = {
    "WORKERS": str(WORKERS),
    "CIRCUIT_PROBE_MIN_MS": str(PROBE_MIN_MS),
    "CIRCUIT_PROBE_MAX_MS": str(PROBE_MAX_MS),
    "CIRCUIT_RAMP_MS": "2000",
}
# Calls admitted just before the circuit opened may reach the bank a moment after the
# "circuit opened" line: those are the calls before it opened, not probes.
ADMITTED_BEFORE_OPEN_MS = 250
DRAIN_BOUND_S = 60.0  # the bound after the dependency's return


def figures(test: str, **values: Any) -> None:
    print("outage-figures " + json.dumps({"test": test, **values}), flush=True)


@pytest.fixture
def outage_stack(moto: MotoServer) -> ChargeStack:
    return provision_stack(moto, lease_seconds=LEASE_S, max_receive_count=MAX_RECEIVE_COUNT)


@pytest.fixture
def outage_consumers(processes: ProcessManager, outage_stack: ChargeStack, fake_bank: FakeBank) -> Iterator[Consumers]:
    factory = Consumers(processes, outage_stack, fake_bank)
    yield factory
    exit_codes = factory.stop_all()
    assert all(code == 0 for code in exit_codes.values()), f"consumer exit codes after SIGTERM: {exit_codes}"


def send_charges(stack: ChargeStack, prefix: str, count: int) -> list[str]:
    ids = [f"CHG-{prefix}-{i:04d}" for i in range(count)]
    stack.send_bodies(charge_body(charge(charge_id)) for charge_id in ids)
    return ids


def wait_all_done(stack: ChargeStack, ids: list[str], timeout: float) -> float:
    """Polls until every charge is DONE/DEBITED and the source queue is empty; returns when
    (monotonic seconds)."""

    def done() -> bool:
        records = stack.records()
        finished = all(records.get(c, {}).get("status") == "DEBITED" for c in ids)
        return finished and stack.depth() == 0

    wait_until(done, timeout=timeout, interval=0.5, description=f"{len(ids)} charges DEBITED and the queue empty")
    return time.monotonic()


def assert_debited_exactly_once(bank: FakeBank, ids: list[str]) -> None:
    ledger = bank.ledger()
    debited = sorted(d["chargeId"] for d in ledger["debits"])
    assert debited == sorted(ids), "each charge debited, none twice"
    created = [a["chargeId"] for a in bank.attempts() if a["status"] == 201]
    assert sorted(created) == sorted(ids), "exactly one committing attempt per charge"


def open_spells(consumer: Consumer, dependency: str) -> list[tuple[float, float | None]]:
    """(opened, closed) in epoch seconds from the consumer's transition log lines."""
    spells: list[tuple[float, float | None]] = []
    opened: float | None = None
    for line in consumer.logs():
        if line.get("dependency") != dependency or "ts" not in line:
            continue
        if line.get("msg") == "circuit opened" and opened is None:
            opened = parse_ts(line["ts"])
        elif line.get("msg") == "circuit closed" and opened is not None:
            spells.append((opened, parse_ts(line["ts"])))
            opened = None
    if opened is not None:
        spells.append((opened, None))
    return spells


def probe_bound(spell_ms: float) -> int:
    """The most probes the schedule can fit into an open spell of `spell_ms`: every delay at
    its jittered minimum (half of min(MIN * 2^n, MAX)), plus the one that closes it."""
    elapsed, n = 0.0, 0
    while True:
        gap = min(PROBE_MIN_MS * 2**n, PROBE_MAX_MS) / 2
        if elapsed + gap > spell_ms:
            return n + 1
        elapsed += gap
        n += 1


def metric_when(consumer: Consumer, name: str, value: float, timeout: float, **labels: str) -> None:
    wait_until(lambda: consumer.metric(name, **labels) == value, timeout=timeout, interval=0.2,
               description=f"{name}{labels} == {value}")


# --- (a) the bank away for 100 s ---------------------------------------------------------


@pytest.mark.timeout(240)
def test_a_100_s_bank_outage_parks_the_backlog_probes_at_the_schedule_and_drains_it_once(
    outage_stack: ChargeStack, outage_consumers: Consumers, fake_bank: FakeBank
) -> None:
    outage_s = 100.0
    consumer = outage_consumers.start(**CIRCUIT_ENV)
    began = time.monotonic()
    fake_bank.set_faults(transientErrorRate=1.0, expiresAfterMs=int(outage_s * 1000))
    recovered_by = began + outage_s  # the bank's clock ends the outage no later than this
    ids = send_charges(outage_stack, "OUT", 30)

    metric_when(consumer, "ic_circuit_state", 1, timeout=30, dependency="debit")
    # The receiver consults the gate when its long poll in progress (<= 20 s) returns.
    metric_when(consumer, "ic_intake_paused", 1, timeout=25)
    # Polled while the bank is down: nothing may reach the DLQ, nothing may be debited.
    while time.monotonic() < recovered_by - 1:
        assert outage_stack.depth(outage_stack.dlq_url) == 0
        time.sleep(1.0)
    assert fake_bank.ledger()["debits"] == []

    done_at = wait_all_done(outage_stack, ids, timeout=(recovered_by - time.monotonic()) + DRAIN_BOUND_S)
    drain_s = done_at - recovered_by
    assert outage_stack.depth(outage_stack.dlq_url) == 0
    assert_debited_exactly_once(fake_bank, ids)

    spells = open_spells(consumer, "debit")
    assert spells, "the debit circuit opened"
    attempts = fake_bank.attempts()
    opened, closed = spells[0]
    assert closed is not None, "the debit circuit closed again"
    before_open = [a for a in attempts if a["epochMs"] <= opened * 1000 + ADMITTED_BEFORE_OPEN_MS]
    while_open = [a for a in attempts if opened * 1000 + ADMITTED_BEFORE_OPEN_MS < a["epochMs"] <= closed * 1000]
    spell_ms = (closed - opened) * 1000
    bound = probe_bound(spell_ms)
    gaps = [b["monotonicMs"] - a["monotonicMs"] for a, b in zip(while_open, while_open[1:])]
    figures(
        "bank-outage-100s",
        dlq=0,
        attemptsBeforeOpen=len(before_open),
        attemptsWhileOpen=len(while_open),
        probeBound=bound,
        openSeconds=round(spell_ms / 1000, 1),
        minGapMs=round(min(gaps, default=0)),
        totalAttempts=len(attempts),
        drainSecondsAfterRecovery=round(drain_s, 1),
        spells=len(spells),
    )
    assert len(while_open) <= bound, f"{len(while_open)} attempts while open, schedule allows {bound}"
    # One process, one probe at a time: never two attempts closer than the shortest delay.
    assert min(gaps, default=PROBE_MIN_MS) >= PROBE_MIN_MS / 2 - 50, gaps
    assert drain_s <= DRAIN_BOUND_S
    assert consumer.metric("ic_circuit_state", dependency="debit") == 0
    assert consumer.metric("ic_circuit_transitions_total", dependency="debit", to="open") >= 1


# --- (b) 429 with Retry-After ----------------------------------------------------------------


@pytest.mark.timeout(90)
@pytest.mark.parametrize("form", ["delta-seconds", "http-date"])
def test_a_429_with_retry_after_6_gets_no_second_attempt_before_6_s(
    outage_stack: ChargeStack, outage_consumers: Consumers, fake_bank: FakeBank, form: str
) -> None:
    outage_consumers.start(**CIRCUIT_ENV)
    fake_bank.set_faults(transientErrorRate=1.0, transientErrorStatus=429, retryAfter={"seconds": 6, "format": form})
    (charge_id,) = send_charges(outage_stack, f"RA{form[0].upper()}", 1)
    wait_until(lambda: fake_bank.attempts(charge_id=charge_id), timeout=20, interval=0.1, description="first attempt")
    fake_bank.set_faults()  # the bank is ready the moment it answered; only the header holds the caller back

    wait_all_done(outage_stack, [charge_id], timeout=40)
    first, second = fake_bank.attempts(charge_id=charge_id)[:2]
    assert (first["status"], second["status"]) == (429, 201)
    gap_s = (second["monotonicMs"] - first["monotonicMs"]) / 1000
    figures("bank-429-retry-after", form=form, retryAfter=6, gapSeconds=round(gap_s, 2))
    assert gap_s >= 6.0
    assert outage_stack.depth(outage_stack.dlq_url) == 0
    assert_debited_exactly_once(fake_bank, [charge_id])


# --- (c) the idempotency store away ----------------------------------------------------------


@pytest.mark.timeout(200)
def test_a_store_outage_parks_the_backlog_and_dead_letters_nothing(
    outage_stack: ChargeStack, outage_consumers: Consumers, fake_bank: FakeBank
) -> None:
    outage_s = 60.0
    moto_url = urlsplit(outage_stack.moto.endpoint_url)
    proxy = TcpProxy(moto_url.hostname or "127.0.0.1", moto_url.port or 80)
    try:
        consumer = outage_consumers.start(**CIRCUIT_ENV, AWS_ENDPOINT_URL_DYNAMODB=proxy.url)
        proxy.set_mode("refuse")
        began = time.monotonic()
        ids = send_charges(outage_stack, "STO", 20)
        metric_when(consumer, "ic_circuit_state", 1, timeout=30, dependency="store")
        # The receiver consults the gate when its long poll in progress (<= 20 s) returns.
        metric_when(consumer, "ic_intake_paused", 1, timeout=25)
        while time.monotonic() < began + outage_s:
            assert outage_stack.depth(outage_stack.dlq_url) == 0
            time.sleep(1.0)
        proxy.set_mode("forward")
        recovered = time.monotonic()

        done_at = wait_all_done(outage_stack, ids, timeout=DRAIN_BOUND_S + 10)
        drain_s = done_at - recovered
        refused = proxy.refused
    finally:
        proxy.close()
    assert outage_stack.depth(outage_stack.dlq_url) == 0
    assert_debited_exactly_once(fake_bank, ids)
    spells = open_spells(consumer, "store")
    probes = consumer.metric("ic_circuit_probes_total", dependency="store")
    figures("store-outage-60s", dlq=0, drainSecondsAfterRecovery=round(drain_s, 1), storeProbes=probes,
            refusedConnections=refused, spells=len(spells))
    assert drain_s <= DRAIN_BOUND_S
    assert spells and spells[0][1] is not None, "the store circuit opened and closed"
