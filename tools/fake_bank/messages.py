"""Parsing and validation of the fake bank's request bodies.

Strict on purpose: the fake bank is where our HTTP adapters are checked, so a request the
real core-banking API would reject must be rejected here too (400), not silently accepted.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_CURRENCY = re.compile(r"[A-Z]{3}")
_KEY = re.compile(r"[A-Za-z0-9._:-]{1,256}")


class MalformedRequest(ValueError):
    """The request cannot be processed as sent; answered with 400 and this message as detail."""


def parse_json_object(raw: bytes) -> dict[str, Any]:
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise MalformedRequest(f"body is not valid JSON: {e}") from None
    if not isinstance(body, dict):
        raise MalformedRequest("body must be a JSON object")
    return body


def _string(body: dict[str, Any], field: str) -> str:
    value = body.get(field)
    if not isinstance(value, str) or not value:
        raise MalformedRequest(f"field {field!r} must be a non-empty string")
    return value


def _amount(body: dict[str, Any], field: str) -> int:
    value = body.get(field)
    # bool is an int subclass in Python; a JSON true is not an amount.
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise MalformedRequest(f"field {field!r} must be a positive integer (minor units)")
    return value


@dataclass(frozen=True)
class DebitRequest:
    """The fields that identify a debit; two requests conflict iff these differ."""

    charge_id: str
    account_id: str
    amount_minor: int
    currency: str
    charge_type: str

    @staticmethod
    def valid_key(key: str) -> bool:
        """The idempotency-key alphabet our adapters send (docs/design.md §5)."""
        return _KEY.fullmatch(key) is not None

    @staticmethod
    def parse(idempotency_key: str | None, raw: bytes) -> DebitRequest:
        if not idempotency_key:
            raise MalformedRequest("missing Idempotency-Key header")
        body = parse_json_object(raw)
        request = DebitRequest(
            charge_id=_string(body, "chargeId"),
            account_id=_string(body, "accountId"),
            amount_minor=_amount(body, "amountMinor"),
            currency=_string(body, "currency"),
            charge_type=_string(body, "chargeType"),
        )
        if not _CURRENCY.fullmatch(request.currency):
            raise MalformedRequest("field 'currency' must be an ISO 4217 alpha-3 code")
        if idempotency_key != request.charge_id:
            raise MalformedRequest("Idempotency-Key must equal the body's chargeId")
        return request


@dataclass(frozen=True)
class NotificationRequest:
    key: str
    charge_id: str
    account_id: str
    debit_id: str

    @staticmethod
    def parse(idempotency_key: str | None, raw: bytes) -> NotificationRequest:
        if not idempotency_key:
            raise MalformedRequest("missing Idempotency-Key header")
        body = parse_json_object(raw)
        request = NotificationRequest(
            key=idempotency_key,
            charge_id=_string(body, "chargeId"),
            account_id=_string(body, "accountId"),
            debit_id=_string(body, "debitId"),
        )
        if idempotency_key != f"{request.charge_id}:notify":
            raise MalformedRequest("Idempotency-Key must be '<chargeId>:notify'")
        return request
