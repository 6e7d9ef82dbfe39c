"""The fake bank's debit ledger as the bank's daily export: CSV (RFC 4180), one row per debit.

The columns are the contract `charge-recovery reconcile` reads (docs/design.md §5 "reconcile"):
idempotencyKey,debitId,accountId,amountMinor,currency,postedAt, with postedAt ISO-8601 UTC.
A replayed debit is one row: the bank deduplicated it on its Idempotency-Key.
"""

from __future__ import annotations

import csv
import datetime
import io
from typing import Any

COLUMNS = ("idempotencyKey", "debitId", "accountId", "amountMinor", "currency", "postedAt")


def iso_utc(epoch_ms: int) -> str:
    at = datetime.datetime.fromtimestamp(epoch_ms / 1000, tz=datetime.timezone.utc)
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{epoch_ms % 1000:03d}Z"


def ledger_csv(debits: list[dict[str, Any]]) -> str:
    """The export of `debits` (the snapshot's debit objects), oldest first."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    for d in sorted(debits, key=lambda d: (d["createdAt"], d["debitId"])):
        writer.writerow(
            (d["chargeId"], d["debitId"], d["accountId"], d["amountMinor"], d["currency"], iso_utc(d["createdAt"]))
        )
    return out.getvalue()
