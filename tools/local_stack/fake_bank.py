"""Handle for the fake bank (`python -m tools.fake_bank`, tools/README.md): typed helpers for
its debit, notification, ledger and admin APIs, and the environment that points the consumer
at it.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tools.local_stack.http_json import HttpResponse, http_request
from tools.local_stack.paths import PYTHON
from tools.local_stack.processes import ManagedProcess, ProcessManager, json_event


@dataclass
class FakeBank:
    """A running `python -m tools.fake_bank`, with typed helpers for its API."""

    process: ManagedProcess
    url: str
    seed: int
    default_timeout: float = field(default=5.0)
    tls: ssl.SSLContext | None = None  # for an https fake bank: our CA and client certificate

    def request(self, method: str, path: str, body: Any = None, **kwargs: Any) -> HttpResponse:
        kwargs.setdefault("timeout", self.default_timeout)
        kwargs.setdefault("tls", self.tls)
        return http_request(self.url, method, path, body, **kwargs)

    def debit(self, body: dict[str, Any], key: str | None = None, **kwargs: Any) -> HttpResponse:
        """POST /v1/debits with Idempotency-Key = `key` or the body's chargeId."""
        headers = {"Idempotency-Key": key if key is not None else str(body["chargeId"])}
        return self.request("POST", "/v1/debits", body, headers=headers, **kwargs)

    def notify(self, body: dict[str, Any], key: str | None = None, **kwargs: Any) -> HttpResponse:
        """POST /v1/notifications with Idempotency-Key = `key` or '<chargeId>:notify'."""
        headers = {"Idempotency-Key": key if key is not None else f"{body['chargeId']}:notify"}
        return self.request("POST", "/v1/notifications", body, headers=headers, **kwargs)

    def inquire(self, key: str, **kwargs: Any) -> HttpResponse:
        """GET /v1/debits/{key}: the status inquiry (200 {debitId} or 404)."""
        return self.request("GET", f"/v1/debits/{key}", **kwargs)

    def _ok(self, method: str, path: str, body: Any = None) -> Any:
        response = self.request(method, path, body)
        if response.status != 200:
            raise RuntimeError(f"fake-bank {method} {path} answered {response.status}: {response.body}")
        return response.body

    def ledger(self) -> dict[str, Any]:
        return self._ok("GET", "/v1/ledger")

    def ledger_csv(self) -> str:
        """GET /v1/ledger.csv: the debits as the bank's export, what `reconcile` reads."""
        return self._ok("GET", "/v1/ledger.csv")

    def faults(self) -> dict[str, Any]:
        return self._ok("GET", "/admin/faults")

    def set_faults(self, faults: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
        """Replace the whole fault configuration (JSON field names, e.g. transientErrorRate)."""
        return self._ok("POST", "/admin/faults", {**(faults or {}), **fields})

    def reset(self) -> None:
        self._ok("POST", "/admin/reset")

    def attempts(self, kind: str = "debit", charge_id: str | None = None) -> list[dict[str, Any]]:
        """GET /admin/attempts: every request of that kind as it arrived, in order."""
        query = f"?kind={kind}" + (f"&chargeId={charge_id}" if charge_id else "")
        return self._ok("GET", "/admin/attempts" + query)["attempts"]

    def env(self) -> dict[str, str]:
        """Environment for the consumer: both APIs are served by this one process."""
        return {"CORE_BANKING_URL": self.url, "NOTIFICATION_URL": self.url}


def start_fake_bank(
    manager: ProcessManager,
    *,
    seed: int = 1234,
    extra_args: Iterable[str] = (),
    name: str = "fake-bank",
    tls: ssl.SSLContext | None = None,
) -> FakeBank:
    """Start `python -m tools.fake_bank` (from the repository root) on a free port with a fixed
    seed, so injected faults repeat from run to run, and wait for its "listening" line. With
    --tls-cert among `extra_args` it serves https; `tls` is then how the helpers connect."""
    argv = [PYTHON, "-m", "tools.fake_bank", "--port", "0", "--seed", str(seed), *extra_args]
    proc = manager.start(name, argv, ready=json_event("listening"), timeout=20.0)
    return FakeBank(proc, proc.ready_info["url"], seed, tls=tls)
