"""The workload: charges to send and what each must end as.

Of `charges` charges, about 2% are on an account the bank refuses (they must end FAILED and in
the DLQ), 5% get a second copy with another amount (a payload mismatch: whichever copy is
claimed first is debited, every copy of the other payload must be dead-lettered), and the
rest are plain. 20% of the charges are sent twice (a producer retry), and 3% extra bodies
are invalid (each carries an `INV-` id so its DLQ copy can be found). The order is shuffled.
Everything is drawn from one seeded random source, so a seed replays the same workload.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

REFUSED_ACCOUNT = "ACC-CLOSED"


@dataclass(frozen=True)
class Outgoing:
    body: str
    charge_id: str | None  # None for invalid bodies
    kind: str  # original, duplicate, mismatch, invalid
    tag: str = ""  # the INV- id of an invalid body


def charge_body(charge_id: str, account: str, amount: int) -> str:
    return json.dumps({"schemaVersion": 1, "chargeId": charge_id, "accountId": account, "chargeType": "SMS_ALERT_FEE",
                       "amountMinor": amount, "currency": "INR", "dueDate": "2026-11-30"}, separators=(",", ":"))


def invalid_body(tag: str, variant: int) -> str:
    if variant == 0:
        return f"not json {tag}"
    if variant == 1:  # a negative amount
        return json.dumps({"schemaVersion": 1, "chargeId": tag, "accountId": "ACC-1", "chargeType": "SMS_ALERT_FEE",
                           "amountMinor": -5, "currency": "INR", "dueDate": "2026-11-30"})
    return json.dumps({"schemaVersion": 1, "chargeId": tag, "accountId": "ACC-1", "chargeType": "SMS_ALERT_FEE",
                       "amountMinor": 100, "currency": "XXQ", "dueDate": "2026-02-30"})


@dataclass
class Workload:
    plan: dict[str, dict[str, Any]]
    invalid: set[str]
    messages: list[Outgoing]


def make_workload(prefix: str, charges: int, rng: random.Random) -> Workload:
    plan: dict[str, dict[str, Any]] = {}
    messages: list[Outgoing] = []
    for n in range(charges):
        charge_id = f"CHG-{prefix}-{n:06d}"
        amount = rng.randint(100, 50_000)
        draw = rng.random()
        if draw < 0.02:
            account, kind = f"{REFUSED_ACCOUNT}-{n:06d}", "refused"
        else:
            account, kind = f"ACC-{rng.randint(0, 10**8):010d}", "valid"
        spec: dict[str, Any] = {"kind": kind, "amount": amount}
        body = charge_body(charge_id, account, amount)
        messages.append(Outgoing(body, charge_id, "original"))
        if kind == "valid" and 0.02 <= draw < 0.07:
            spec.update(kind="mismatch", altAmount=amount + rng.randint(1, 999))
            messages.append(Outgoing(charge_body(charge_id, account, spec["altAmount"]), charge_id, "mismatch"))
        if rng.random() < 0.2:
            messages.append(Outgoing(body, charge_id, "duplicate"))
        plan[charge_id] = spec
    invalid = set()
    for n in range(max(1, charges * 3 // 100)):
        tag = f"INV-{prefix}-{n:05d}"
        invalid.add(tag)
        messages.append(Outgoing(invalid_body(tag, n % 3), None, "invalid", tag))
    rng.shuffle(messages)
    return Workload(plan, invalid, messages)
