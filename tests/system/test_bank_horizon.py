"""The bank's memory of idempotency keys (docs/design.md §3, "The bank's memory of keys"; issue
35): a debit whose first attempt committed but never answered is asked about before it is sent
again, and is never sent again once the bank may have forgotten its key.

Run against the binary before the change (IC_BUILD_DIR=<a build of c0908ce>), the second test
fails: the bank, having forgotten the keys, debits every charge a second time."""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from typing import Any

import pytest

from charges import charge, charge_body
from tools.local_stack.charge_recovery import ChargeStack, Consumers, attribute, binary
from tools.local_stack.fake_bank import FakeBank
from tools.local_stack.processes import wait_until

pytestmark = pytest.mark.timeout(150)

# Longer than our 10 s debit timeout: the debit commits and its answer never arrives in time.
COMMIT_THEN_HANG = {"rate": 1.0, "delayMs": 15_000, "mode": "delay"}


def rows_by_charge(bank: FakeBank) -> Counter[str]:
    return Counter(d["chargeId"] for d in bank.ledger()["debits"])


def resolve(stack: ChargeStack, ledger: str, *args: str) -> tuple[int, list[dict[str, Any]]]:
    """reconcile --resolve-uncertain --ledger -, the bank's export on stdin."""
    result = subprocess.run(
        [str(binary()), "reconcile", "--resolve-uncertain", "--ledger", "-", "--actor", "test", *args],
        input=ledger,
        env={**os.environ, **stack.env()},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return result.returncode, [json.loads(line) for line in result.stdout.splitlines()]


def test_a_committed_debit_that_timed_out_is_found_by_the_inquiry_and_never_posted_again(
    charge_stack: ChargeStack, consumers: Consumers, fake_bank: FakeBank
) -> None:
    events = [charge(f"CHG-ASK-{i}") for i in range(3)]
    fake_bank.set_faults(commitThenTimeout=COMMIT_THEN_HANG)
    consumer = consumers.start(WORKERS="4", BANK_STATUS_INQUIRY="true")
    charge_stack.send_bodies([charge_body(e) for e in events])

    records = {e["chargeId"]: charge_stack.final_record(e["chargeId"], timeout=60) for e in events}
    charge_stack.wait_drained()

    debits = {d["chargeId"]: d for d in fake_bank.ledger()["debits"]}
    for event in events:
        charge_id = event["chargeId"]
        record = records[charge_id]
        assert record["state"] == "DONE" and record["status"] == "DEBITED", record
        assert record["debitRef"] == debits[charge_id]["debitId"]
        # Exactly one POST: the retry asked instead, and the bank's answer settled it.
        assert len(fake_bank.attempts("debit", charge_id)) == 1
        assert debits[charge_id]["replays"] == 0
        assert any(a["status"] == 200 for a in fake_bank.attempts("inquiry", charge_id))
    assert rows_by_charge(fake_bank) == {e["chargeId"]: 1 for e in events}
    assert consumer.metric("ic_debit_inquiries_total", result="found") == len(events)
    assert consumer.logged("debit inquired", result="found")


def test_past_the_banks_window_a_charge_is_never_debited_twice_but_ends_debit_uncertain(
    charge_stack: ChargeStack, consumers: Consumers, fake_bank: FakeBank
) -> None:
    events = [charge(f"CHG-HORIZON-{i}") for i in range(4)]
    fake_bank.set_faults(keyMemoryMs=8_000, commitThenTimeout=COMMIT_THEN_HANG)
    consumers.start(WORKERS="4", BANK_IDEMPOTENCY_WINDOW="5s", BANK_STATUS_INQUIRY="true")
    charge_stack.send_bodies([charge_body(e) for e in events])
    wait_until(lambda: len(rows_by_charge(fake_bank)) == len(events), timeout=30, description="first debits committed")
    # Then the bank is down for 25 s, answering 503 to every call, longer than its memory.
    fake_bank.set_faults(keyMemoryMs=8_000, transientErrorRate=1.0, expiresAfterMs=25_000)

    records = {e["chargeId"]: charge_stack.final_record(e["chargeId"], timeout=90) for e in events}
    charge_stack.wait_drained(timeout=60)
    # Well past the outage and the bank's memory: nothing may have been sent again since.
    wait_until(lambda: fake_bank.faults()["transientErrorRate"] == 0.0, timeout=40, description="outage over")

    assert rows_by_charge(fake_bank) == {e["chargeId"]: 1 for e in events}, fake_bank.ledger()["debits"]
    uncertain = [r for r in records.values() if r.get("status") == "DEBIT_UNCERTAIN"]
    for record in records.values():
        assert (record["state"], record["status"]) in {("DONE", "DEBITED"), ("FAILED", "DEBIT_UNCERTAIN")}, record
    for record in uncertain:
        assert record["failureReason"] == "DEBIT_UNCERTAIN" and record["attention"] == "FAILED"
    dead = charge_stack.dead_letters(len(uncertain)) if uncertain else []
    assert sorted(attribute(m, "chargeId") for m in dead) == sorted(r["pk"] for r in uncertain)
    assert {attribute(m, "failureReason") for m in dead} <= {"DEBIT_UNCERTAIN"}

    # reconcile settles them from the bank's ledger: each was debited once, so each is DONE with
    # the ledger's debitId; a dry run first writes nothing.
    ledger = fake_bank.ledger_csv()
    code, lines = resolve(charge_stack, ledger, "--dry-run")
    assert code == 0 and lines[-1] == {
        "event": "uncertain resolved", "dryRun": True, "debited": len(uncertain), "reopened": 0, "unresolved": 0
    }, lines
    assert all(charge_stack.record(r["pk"])["status"] == "DEBIT_UNCERTAIN" for r in uncertain)
    code, lines = resolve(charge_stack, ledger)
    assert code == 0 and lines[-1]["debited"] == len(uncertain), lines
    debit_of = {d["chargeId"]: d["debitId"] for d in fake_bank.ledger()["debits"]}
    for event in events:
        record = charge_stack.record(event["chargeId"])
        assert (record["state"], record["status"]) == ("DONE", "DEBITED"), record
        assert record["debitRef"] == debit_of[event["chargeId"]]
        assert "attention" not in record and "failureReason" not in record
    # Their dead letters redriven now are acked as DONE: still one debit each.
    if dead:
        charge_stack.release(dead, charge_stack.dlq_url)
        redriven = charge_stack.cli("redrive", "--reason", "DEBIT_UNCERTAIN")
        assert redriven.returncode == 0, redriven.stderr
        charge_stack.wait_drained()
        charge_stack.wait_drained(queue_url=charge_stack.dlq_url)
    assert rows_by_charge(fake_bank) == {e["chargeId"]: 1 for e in events}
