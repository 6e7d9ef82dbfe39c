"""Charge events for the system tests: valid ChargeDueEvent v1 bodies (docs/design.md §5) and the
canonical payload hash computed independently of the C++ code, as an oracle. Test data, not
local-stack machinery, so it stays here; the stack itself is tools/local_stack.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

DEFAULT_ACCOUNT = "ACC-0012345678"


def charge(
    charge_id: str,
    *,
    account: str = DEFAULT_ACCOUNT,
    amount: int = 2500,
    currency: str = "INR",
    charge_type: str = "SMS_ALERT_FEE",
    due_date: str = "2026-11-30",
) -> dict[str, Any]:
    """A valid ChargeDueEvent v1 (docs/design.md §5)."""
    return {
        "schemaVersion": 1,
        "chargeId": charge_id,
        "accountId": account,
        "chargeType": charge_type,
        "amountMinor": amount,
        "currency": currency,
        "dueDate": due_date,
    }


def charge_body(event: dict[str, Any]) -> str:
    return json.dumps(event, separators=(",", ":"))


def payload_hash(event: dict[str, Any]) -> str:
    """docs/design.md §5's canonical hash, computed independently of the C++ code."""
    canonical = "|".join(
        [
            "v1",
            event["chargeId"],
            event["accountId"],
            event["chargeType"],
            str(event["amountMinor"]),
            event["currency"],
            event["dueDate"],
        ]
    )
    return hashlib.sha256(canonical.encode()).hexdigest()
