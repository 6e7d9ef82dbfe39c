"""`charge-recovery reconcile` against a real run (docs/design.md §5 "reconcile"): the fake bank's
own export reconciles clean; each kind planted in a copy of that export is reported for exactly
the planted charge; a malformed ledger is one line on stderr and exit 2. One real run serves
every case (a few seconds)."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
from typing import Any

from charges import charge, charge_body
from tools.local_stack.charge_recovery import ChargeStack, Consumers, binary
from tools.local_stack.fake_bank import FakeBank

KINDS = ("DEBITED_NOT_RECORDED", "RECORDED_NOT_DEBITED", "AMOUNT_MISMATCH", "DEBIT_REF_MISMATCH", "DUPLICATE_DEBIT")


def reconcile(stack: ChargeStack, ledger: str, *args: str) -> subprocess.CompletedProcess[str]:
    """reconcile --ledger - --full, the ledger on stdin."""
    return subprocess.run(
        [str(binary()), "reconcile", "--ledger", "-", "--full", *args],
        input=ledger,
        env={**os.environ, **stack.env()},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def rows_of(ledger: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(ledger)))


def to_csv(rows: list[dict[str, str]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def found(result: subprocess.CompletedProcess[str]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    return lines[:-1], lines[-1]


def test_reconcile_against_a_real_run(charge_stack: ChargeStack, consumers: Consumers, fake_bank: FakeBank) -> None:
    events = [charge(f"CHG-RECON-{i}") for i in range(6)]
    consumers.start()
    charge_stack.send_bodies([charge_body(e) for e in events])
    for e in events:
        assert charge_stack.final_record(e["chargeId"])["status"] == "DEBITED"
    ledger = fake_bank.ledger_csv()
    # The bank exports in posting order, which concurrent workers make arbitrary; the planted
    # cases below name rows by charge.
    rows = sorted(rows_of(ledger), key=lambda r: r["idempotencyKey"])
    assert len(rows) == len(events) and "ACC-0012345678" in ledger, "the bank's own file"

    clean = reconcile(charge_stack, ledger)
    assert clean.returncode == 0, clean.stderr
    discrepancies, summary = found(clean)
    assert discrepancies == [] and summary["event"] == "reconciled"
    assert (summary["ledgerRows"], summary["matched"]) == (6, 6)
    assert summary["discrepancies"] == {kind: 0 for kind in KINDS}

    def planted(kind: str, change: Any, charge_id: str = "CHG-RECON-1") -> None:
        copy = [dict(r) for r in rows]
        change(copy)
        result = reconcile(charge_stack, to_csv(copy))
        assert result.returncode == 6, (kind, result.stderr)
        discrepancies, summary = found(result)
        assert [(d["kind"], d["chargeId"]) for d in discrepancies] == [(kind, charge_id)], result.stdout
        assert summary["discrepancies"][kind] == 1
        assert "ACC-0012345678" not in result.stdout, "account numbers masked"

    planted("DEBITED_NOT_RECORDED", lambda r: r.append({**r[1], "idempotencyKey": "CHG-GHOST"}), "CHG-GHOST")
    planted("RECORDED_NOT_DEBITED", lambda r: r.pop(1))
    planted("AMOUNT_MISMATCH", lambda r: r[1].update(amountMinor="2501"))
    planted("DEBIT_REF_MISMATCH", lambda r: r[1].update(debitId="DBT-FORGED"))
    planted("DUPLICATE_DEBIT", lambda r: r.append({**r[1], "debitId": "DBT-AGAIN"}))

    bad = reconcile(charge_stack, ledger.replace("2500", "25x0", 1))
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.splitlines() == ["reconcile: line 2, column amountMinor: must be a whole number of minor units"]
