"""fake-bank semantics (DESIGN §5): idempotent debits, notifications, injected faults, the
ledger and the admin API, exercised over HTTP against the real process."""

from __future__ import annotations

import email.utils
import http.client
import json
import threading
import time
from typing import Any

import pytest

from tools.local_stack.fake_bank import FakeBank, start_fake_bank
from tools.local_stack.http_json import http_request
from tools.local_stack.paths import PYTHON
from tools.local_stack.processes import ProcessFailed, ProcessManager, json_event, wait_until

ACCOUNT = "ACC-0012345678"

# A hung server must fail the test, not the CI job (pytest-timeout; fixtures still tear down).
pytestmark = pytest.mark.timeout(60)


def debit_body(charge_id: str = "CHG-20261130-000123", **overrides: Any) -> dict[str, Any]:
    body = {
        "chargeId": charge_id,
        "accountId": ACCOUNT,
        "amountMinor": 2500,
        "currency": "INR",
        "chargeType": "SMS_ALERT_FEE",
    }
    body.update(overrides)
    return body


def ledger_debit(bank: FakeBank, charge_id: str) -> dict[str, Any] | None:
    return next((d for d in bank.ledger()["debits"] if d["chargeId"] == charge_id), None)


# --- debits -------------------------------------------------------------------------------


def test_first_debit_is_created_and_a_replay_returns_the_same_id_and_is_counted(fake_bank: FakeBank) -> None:
    first = fake_bank.debit(debit_body())
    assert first.status == 201
    debit_id = first.body["debitId"]
    assert debit_id

    replay = fake_bank.debit(debit_body())
    assert replay.status == 200
    assert replay.body == {"debitId": debit_id}

    ledger = fake_bank.ledger()
    assert len(ledger["debits"]) == 1
    entry = ledger["debits"][0]
    assert {k: v for k, v in entry.items() if k != "createdAt"} == {
        **debit_body(),
        "debitId": debit_id,
        "replays": 1,
        "traceparent": None,  # the request carried none
    }
    assert isinstance(entry["createdAt"], int) and entry["createdAt"] > 1_700_000_000_000
    assert ledger["stats"]["debits"] == 1
    assert ledger["stats"]["replays"] == 1


def test_distinct_charges_get_distinct_debit_ids(fake_bank: FakeBank) -> None:
    ids = {fake_bank.debit(debit_body(f"CHG-{i}")).body["debitId"] for i in range(5)}
    assert len(ids) == 5
    assert [d["chargeId"] for d in fake_bank.ledger()["debits"]] == [f"CHG-{i}" for i in range(5)]


@pytest.mark.parametrize(
    "change",
    [{"amountMinor": 2501}, {"accountId": "ACC-0099999999"}, {"currency": "USD"}, {"chargeType": "LOCKER_RENT"}],
    ids=lambda c: next(iter(c)),
)
def test_same_key_with_a_different_body_is_a_conflict_and_moves_nothing(
    fake_bank: FakeBank, change: dict[str, Any]
) -> None:
    original = fake_bank.debit(debit_body())
    assert original.status == 201

    conflict = fake_bank.debit(debit_body(**change))
    assert conflict.status == 409
    assert conflict.body["code"] == "IDEMPOTENCY_KEY_CONFLICT"

    ledger = fake_bank.ledger()
    assert [d["debitId"] for d in ledger["debits"]] == [original.body["debitId"]]
    assert ledger["debits"][0]["amountMinor"] == 2500
    assert ledger["debits"][0]["replays"] == 0
    assert ledger["stats"]["conflicts"] == 1


def test_unknown_extra_fields_do_not_make_a_replay_conflict(fake_bank: FakeBank) -> None:
    assert fake_bank.debit(debit_body()).status == 201
    assert fake_bank.debit(debit_body(note="retry")).status == 200


@pytest.mark.parametrize(
    ("account", "code"),
    [
        ("ACC-NSF-001", "INSUFFICIENT_FUNDS"),
        ("ACC-CLOSED-7", "ACCOUNT_CLOSED"),
        ("ACC-GONE-1", "ACCOUNT_NOT_FOUND"),
        ("ACC-NSF-VIP-2", "ACCOUNT_CLOSED"),  # the longest matching prefix wins
    ],
)
def test_accounts_configured_to_fail_get_422_with_their_code_and_no_debit(
    fake_bank: FakeBank, account: str, code: str
) -> None:
    fake_bank.set_faults(
        permanentFailures={
            "ACC-NSF": "INSUFFICIENT_FUNDS",
            "ACC-NSF-VIP": "ACCOUNT_CLOSED",
            "ACC-CLOSED": "ACCOUNT_CLOSED",
            "ACC-GONE": "ACCOUNT_NOT_FOUND",
        }
    )
    response = fake_bank.debit(debit_body("CHG-P", accountId=account))
    assert response.status == 422
    assert response.body["code"] == code

    assert fake_bank.debit(debit_body("CHG-OK")).status == 201  # other accounts unaffected
    ledger = fake_bank.ledger()
    assert [d["chargeId"] for d in ledger["debits"]] == ["CHG-OK"]
    assert ledger["stats"]["rejected"] == 1


MALFORMED: dict[str, tuple[bytes, dict[str, str]]] = {
    "missing key header": (json.dumps(debit_body()).encode(), {}),
    "key differs from chargeId": (json.dumps(debit_body()).encode(), {"Idempotency-Key": "CHG-OTHER"}),
    "invalid json": (b'{"chargeId": ', {"Idempotency-Key": "CHG-1"}),
    "not an object": (b"[1, 2]", {"Idempotency-Key": "CHG-1"}),
    "invalid utf-8": (b'{"chargeId": "\xff"}', {"Idempotency-Key": "CHG-1"}),
    "missing amount": (
        json.dumps({k: v for k, v in debit_body("CHG-1").items() if k != "amountMinor"}).encode(),
        {"Idempotency-Key": "CHG-1"},
    ),
    "fractional amount": (json.dumps(debit_body("CHG-1", amountMinor=25.5)).encode(), {"Idempotency-Key": "CHG-1"}),
    "amount as string": (json.dumps(debit_body("CHG-1", amountMinor="2500")).encode(), {"Idempotency-Key": "CHG-1"}),
    "zero amount": (json.dumps(debit_body("CHG-1", amountMinor=0)).encode(), {"Idempotency-Key": "CHG-1"}),
    "boolean amount": (json.dumps(debit_body("CHG-1", amountMinor=True)).encode(), {"Idempotency-Key": "CHG-1"}),
    "empty account": (json.dumps(debit_body("CHG-1", accountId="")).encode(), {"Idempotency-Key": "CHG-1"}),
    "lower-case currency": (json.dumps(debit_body("CHG-1", currency="inr")).encode(), {"Idempotency-Key": "CHG-1"}),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_debit_requests_are_400_and_record_nothing(fake_bank: FakeBank, case: str) -> None:
    raw, headers = MALFORMED[case]
    response = fake_bank.request("POST", "/v1/debits", raw, headers=headers)
    assert response.status == 400
    assert response.body["code"] == "MALFORMED_REQUEST"
    assert response.body["detail"]
    ledger = fake_bank.ledger()
    assert ledger["debits"] == []
    assert ledger["stats"]["malformed"] == 1


def test_one_keep_alive_connection_serves_every_kind_of_answer(fake_bank: FakeBank) -> None:
    port = int(fake_bank.url.rsplit(":", 1)[1])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        statuses = []
        sockets = set()
        for body, key in [
            (b"not json", "CHG-K"),
            (debit_body("CHG-K"), None),
            (debit_body("CHG-K", amountMinor=1), None),
            (debit_body("CHG-K"), None),
        ]:
            response = http_request(
                fake_bank.url,
                "POST",
                "/v1/debits",
                body,
                headers={"Idempotency-Key": key or "CHG-K"},
                connection=conn,
            )
            statuses.append(response.status)
            assert response.headers.get("connection", "").lower() != "close"
            sockets.add(id(conn.sock))
        assert statuses == [400, 201, 409, 200]
        assert len(sockets) == 1, "the server closed the keep-alive connection"
    finally:
        conn.close()


def test_chunked_request_bodies_are_accepted(fake_bank: FakeBank) -> None:
    port = int(fake_bank.url.rsplit(":", 1)[1])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        payload = json.dumps(debit_body()).encode()
        chunks = iter([payload[:10], payload[10:]])
        conn.request(
            "POST",
            "/v1/debits",
            body=chunks,
            headers={"Idempotency-Key": debit_body()["chargeId"], "Transfer-Encoding": "chunked"},
            encode_chunked=True,
        )
        response = conn.getresponse()
        assert response.status == 201
        assert json.loads(response.read())["debitId"]
    finally:
        conn.close()


def test_concurrent_requests_for_one_key_create_exactly_one_debit(fake_bank: FakeBank) -> None:
    threads = 16
    barrier = threading.Barrier(threads)
    statuses: list[int] = []
    lock = threading.Lock()

    def send() -> None:
        barrier.wait()
        status = fake_bank.debit(debit_body()).status
        with lock:
            statuses.append(status)

    workers = [threading.Thread(target=send) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert sorted(statuses) == [200] * (threads - 1) + [201]
    ledger = fake_bank.ledger()
    assert len(ledger["debits"]) == 1
    assert ledger["debits"][0]["replays"] == threads - 1


# --- injected faults ----------------------------------------------------------------------


def _statuses_under_transient_faults(bank: FakeBank, count: int) -> list[int]:
    bank.set_faults(transientErrorRate=0.5)
    return [bank.debit(debit_body(f"CHG-T-{i}")).status for i in range(count)]


def test_transient_errors_follow_the_seed_and_commit_nothing(fake_bank: FakeBank) -> None:
    first_run = _statuses_under_transient_faults(fake_bank, 30)
    assert set(first_run) == {201, 503}, first_run
    committed = [f"CHG-T-{i}" for i, s in enumerate(first_run) if s == 201]
    ledger = fake_bank.ledger()
    assert [d["chargeId"] for d in ledger["debits"]] == committed
    assert ledger["stats"]["transientErrors"] == first_run.count(503)

    fake_bank.reset()  # restores the seed: the same requests meet the same faults
    assert _statuses_under_transient_faults(fake_bank, 30) == first_run


def test_a_retry_after_a_transient_error_creates_the_debit(fake_bank: FakeBank) -> None:
    fake_bank.set_faults(transientErrorRate=1.0, transientErrorStatus=502)
    failed = fake_bank.debit(debit_body())
    assert failed.status == 502
    assert failed.body["code"] == "TRANSIENT_FAILURE"
    fake_bank.set_faults()  # no faults
    assert fake_bank.debit(debit_body()).status == 201
    assert fake_bank.ledger()["debits"][0]["replays"] == 0


def test_latency_delays_the_answer(fake_bank: FakeBank) -> None:
    fake_bank.set_faults(latencyMs=300)
    started = time.monotonic()
    assert fake_bank.debit(debit_body()).status == 201
    assert time.monotonic() - started >= 0.29


def test_commit_then_timeout_commits_while_the_caller_times_out(fake_bank: FakeBank) -> None:
    fake_bank.set_faults(commitThenTimeout={"chargeIds": ["CHG-CTT"], "delayMs": 3000})
    with pytest.raises(TimeoutError):
        fake_bank.debit(debit_body("CHG-CTT"), timeout=0.5)

    entry = ledger_debit(fake_bank, "CHG-CTT")
    assert entry is not None, "the debit must be committed although the caller saw a timeout"
    assert entry["replays"] == 0

    # The caller's retry is answered at once with the original debit.
    retry = fake_bank.debit(debit_body("CHG-CTT"), timeout=2.0)
    assert retry.status == 200
    assert retry.body["debitId"] == entry["debitId"]
    ledger = fake_bank.ledger()
    assert ledger["debits"][0]["replays"] == 1
    assert ledger["stats"]["commitThenTimeouts"] == 1
    # Charges not listed are answered normally.
    assert fake_bank.debit(debit_body("CHG-OTHER"), timeout=2.0).status == 201


def test_inquiry_finds_a_debit_by_its_key_and_404s_an_unknown_one(fake_bank: FakeBank) -> None:
    created = fake_bank.debit(debit_body("CHG-ASK"))
    found = fake_bank.inquire("CHG-ASK")
    assert found.status == 200 and found.body == {"debitId": created.body["debitId"], "chargeId": "CHG-ASK"}
    missing = fake_bank.inquire("CHG-NEVER")
    assert missing.status == 404 and missing.body["code"] == "DEBIT_NOT_FOUND"
    assert fake_bank.inquire("bad%20key").status == 400
    fake_bank.set_faults(transientErrorRate=1.0)
    assert fake_bank.inquire("CHG-ASK").status == 503
    assert [a["status"] for a in fake_bank.attempts("inquiry")] == [200, 404, 503]


def test_a_forgotten_key_is_debited_again_and_no_longer_found(fake_bank: FakeBank) -> None:
    fake_bank.set_faults(keyMemoryMs=300)
    first = fake_bank.debit(debit_body("CHG-FORGET"))
    assert fake_bank.debit(debit_body("CHG-FORGET")).status == 200  # remembered: a replay
    wait_until(lambda: fake_bank.inquire("CHG-FORGET").status == 404, timeout=5, description="key forgotten")
    again = fake_bank.debit(debit_body("CHG-FORGET"))
    assert again.status == 201 and again.body["debitId"] != first.body["debitId"]
    rows = [d for d in fake_bank.ledger()["debits"] if d["chargeId"] == "CHG-FORGET"]
    assert [d["debitId"] for d in rows] == [first.body["debitId"], again.body["debitId"]]
    assert fake_bank.ledger()["stats"]["forgottenKeys"] == 1
    # The memory is the bank's, not an outage: an expired fault configuration keeps it.
    fake_bank.set_faults(keyMemoryMs=300, transientErrorRate=1.0, expiresAfterMs=1)
    wait_until(lambda: fake_bank.faults()["transientErrorRate"] == 0.0, timeout=5, description="outage over")
    assert fake_bank.faults()["keyMemoryMs"] == 300


def test_commit_then_timeout_delivers_the_late_answer_to_a_patient_caller(fake_bank: FakeBank) -> None:
    fake_bank.set_faults(commitThenTimeout={"chargeIds": ["CHG-CTT"], "delayMs": 300})
    started = time.monotonic()
    response = fake_bank.debit(debit_body("CHG-CTT"), timeout=5.0)
    assert response.status == 201
    assert time.monotonic() - started >= 0.29


def test_hang_holds_the_debit_then_drops_it_without_committing(fake_bank: FakeBank) -> None:
    fake_bank.set_faults(hang={"rate": 1.0, "delayMs": 600})
    started = time.monotonic()
    with pytest.raises((TimeoutError, ConnectionError)):
        fake_bank.debit(debit_body("CHG-HANG"), timeout=5.0)
    assert time.monotonic() - started >= 0.59, "the hang must hold the request for delayMs"
    ledger = fake_bank.ledger()
    assert ledger["debits"] == [], "a hung debit commits nothing"
    assert ledger["stats"]["hangs"] == 1
    fake_bank.set_faults(hang={"rate": 0.0})
    assert fake_bank.debit(debit_body("CHG-HANG"), timeout=2.0).status == 201


def test_commit_then_close_drops_the_connection_after_committing(fake_bank: FakeBank) -> None:
    fake_bank.set_faults(commitThenTimeout={"rate": 1.0, "mode": "close"})
    with pytest.raises(ConnectionError):  # http.client.RemoteDisconnected
        fake_bank.debit(debit_body("CHG-CLOSE"))
    entry = ledger_debit(fake_bank, "CHG-CLOSE")
    assert entry is not None
    retry = fake_bank.debit(debit_body("CHG-CLOSE"))
    assert (retry.status, retry.body["debitId"]) == (200, entry["debitId"])


# --- notifications ------------------------------------------------------------------------


def notification_body(charge_id: str = "CHG-N", debit_id: str = "DBT-1") -> dict[str, Any]:
    return {"chargeId": charge_id, "accountId": ACCOUNT, "debitId": debit_id, "template": "CHARGE_DEBITED"}


def test_notification_is_accepted_once_and_replays_are_counted(fake_bank: FakeBank) -> None:
    assert fake_bank.notify(notification_body()).status == 202
    assert fake_bank.notify(notification_body()).status == 200
    ledger = fake_bank.ledger()
    assert ledger["notifications"] == [{"key": "CHG-N:notify", "chargeId": "CHG-N", "debitId": "DBT-1", "count": 2, "traceparent": None}]
    assert ledger["stats"]["notifications"] == 1
    assert ledger["stats"]["notificationReplays"] == 1


@pytest.mark.parametrize("key", [None, "CHG-N", "CHG-OTHER:notify"], ids=["missing", "no-suffix", "other-charge"])
def test_notification_with_a_wrong_key_is_400(fake_bank: FakeBank, key: str | None) -> None:
    headers = {} if key is None else {"Idempotency-Key": key}
    response = fake_bank.request("POST", "/v1/notifications", notification_body(), headers=headers)
    assert response.status == 400
    assert fake_bank.ledger()["notifications"] == []


def test_injected_notification_failure_is_503_and_records_nothing(fake_bank: FakeBank) -> None:
    fake_bank.set_faults(notificationFailureRate=1.0)
    failed = fake_bank.notify(notification_body())
    assert failed.status == 503
    assert fake_bank.ledger()["notifications"] == []
    assert fake_bank.ledger()["stats"]["notificationFailures"] == 1
    fake_bank.set_faults(notificationFailureRate=0.0)
    assert fake_bank.notify(notification_body()).status == 202


# --- admin, ledger, process ---------------------------------------------------------------


def test_faults_round_trip_and_reset_clears_ledger_and_faults(fake_bank: FakeBank) -> None:
    defaults = fake_bank.faults()
    assert defaults["transientErrorRate"] == 0.0
    assert defaults["permanentFailures"] == {}

    applied = fake_bank.set_faults(
        latencyMs=5,
        notificationFailureRate=0.25,
        permanentFailures={"ACC-CLOSED": "ACCOUNT_CLOSED"},
        commitThenTimeout={"chargeIds": ["B", "A"], "delayMs": 100},
    )
    assert fake_bank.faults() == applied
    assert applied["commitThenTimeout"] == {"rate": 0.0, "chargeIds": ["A", "B"], "delayMs": 100, "mode": "delay"}
    assert applied["permanentFailures"] == {"ACC-CLOSED": "ACCOUNT_CLOSED"}

    assert fake_bank.debit(debit_body()).status == 201
    fake_bank.reset()
    assert fake_bank.faults() == defaults
    assert fake_bank.ledger() == {
        "debits": [],
        "notifications": [],
        "stats": {k: 0 for k in fake_bank.ledger()["stats"]},
    }


@pytest.mark.parametrize(
    "faults",
    [
        {"transientErrorRat": 0.5},
        {"transientErrorRate": 1.5},
        {"transientErrorStatus": 404},
        {"latencyMs": -1},
        {"permanentFailures": {"ACC-X": "NO_SUCH_CODE"}},
        {"commitThenTimeout": {"mode": "explode"}},
        {"commitThenTimeout": {"chargeIds": "CHG-1"}},
    ],
    ids=lambda f: json.dumps(f),
)
def test_invalid_fault_configuration_is_rejected_and_changes_nothing(
    fake_bank: FakeBank, faults: dict[str, Any]
) -> None:
    before = fake_bank.faults()
    response = fake_bank.request("POST", "/admin/faults", faults)
    assert response.status == 400
    assert response.body["code"] == "INVALID_FAULTS"
    assert fake_bank.faults() == before


def test_health_and_unknown_routes(fake_bank: FakeBank) -> None:
    assert fake_bank.request("GET", "/health").body == {"status": "ok"}
    assert fake_bank.request("GET", "/v1/nothing").status == 404
    response = fake_bank.request("GET", "/v1/debits")
    assert response.status == 405
    assert fake_bank.request("DELETE", "/v1/ledger").status == 405


def test_logs_are_json_lines_with_masked_account_numbers(fake_bank: FakeBank) -> None:
    assert fake_bank.debit(debit_body("CHG-LOG-1")).status == 201

    def logged() -> dict[str, Any] | None:
        return next(
            (o for o in fake_bank.process.json_lines("stderr") if o.get("chargeId") == "CHG-LOG-1"),
            None,
        )

    line = wait_until(logged, timeout=5, description="request log line")
    assert line["account"] == "**********5678"
    assert line["status"] == 201
    stderr = fake_bank.process.stderr_path.read_text()
    assert ACCOUNT not in stderr and "0012345678" not in stderr
    assert all(json.loads(raw) for raw in stderr.splitlines())  # every line is JSON


def test_port_file_and_clean_exit_on_sigterm(processes: ProcessManager, tmp_path: Any) -> None:
    port_file = tmp_path / "bank.port"
    bank = start_fake_bank(processes, seed=7, extra_args=["--port-file", str(port_file)], name="bank-cli")
    assert int(port_file.read_text()) == bank.process.ready_info["port"]
    assert bank.request("GET", "/health").status == 200
    assert processes.stop(bank.process) == 0
    events = [o.get("event") for o in bank.process.json_lines("stderr")]
    assert events[-2:] == ["stopping", "stopped"]


def test_startup_faults_flag_is_applied(processes: ProcessManager) -> None:
    bank = start_fake_bank(
        processes,
        extra_args=["--faults", json.dumps({"permanentFailures": {"ACC-": "ACCOUNT_NOT_FOUND"}})],
        name="bank-faults",
    )
    response = bank.debit(debit_body())
    assert (response.status, response.body["code"]) == (422, "ACCOUNT_NOT_FOUND")


def test_invalid_startup_faults_flag_fails_fast(processes: ProcessManager) -> None:
    with pytest.raises(ProcessFailed, match="--faults"):
        processes.start(
            "bank-bad-flag",
            [PYTHON, "-m", "tools.fake_bank", "--faults", '{"nope": 1}'],
            ready=json_event("listening"),
            timeout=10,
        )


# --- outages: Retry-After, periods, the attempt log (issue 22) ------------------------------


@pytest.mark.parametrize("status", [503, 429])
def test_retry_after_in_delta_seconds_on_injected_errors(fake_bank: FakeBank, status: int) -> None:
    fake_bank.set_faults(transientErrorRate=1.0, transientErrorStatus=status, retryAfter={"seconds": 6})
    answer = fake_bank.debit(debit_body())
    assert answer.status == status
    assert answer.body["code"] == ("RATE_LIMITED" if status == 429 else "TRANSIENT_FAILURE")
    assert answer.headers["retry-after"] == "6"
    assert fake_bank.ledger()["debits"] == []


def test_retry_after_as_an_http_date_names_a_moment_at_least_that_far_ahead(fake_bank: FakeBank) -> None:
    fake_bank.set_faults(transientErrorRate=1.0, transientErrorStatus=429, retryAfter={"seconds": 6, "format": "http-date"})
    before = time.time()
    answer = fake_bank.debit(debit_body())
    after = time.time()
    assert answer.status == 429
    when = email.utils.parsedate_to_datetime(answer.headers["retry-after"]).timestamp()
    assert answer.headers["retry-after"].endswith(" GMT")
    assert before + 6 <= when <= after + 7


def test_notification_failures_carry_retry_after_and_successes_do_not(fake_bank: FakeBank) -> None:
    fake_bank.set_faults(notificationFailureRate=1.0, retryAfter={"seconds": 3})
    assert fake_bank.notify(notification_body()).headers["retry-after"] == "3"
    created = fake_bank.debit(debit_body())
    assert created.status == 201 and "retry-after" not in created.headers


def test_an_outage_for_a_period_ends_by_itself_and_keeps_permanent_failures(fake_bank: FakeBank) -> None:
    fake_bank.set_faults(
        transientErrorRate=1.0, latencyMs=50, expiresAfterMs=600, permanentFailures={"ACC-CLOSED": "ACCOUNT_CLOSED"}
    )
    assert fake_bank.debit(debit_body("CHG-P-1")).status == 503
    wait_until(lambda: fake_bank.faults()["transientErrorRate"] == 0.0, timeout=10, interval=0.05, description="outage over")
    assert fake_bank.faults()["latencyMs"] == 0
    assert fake_bank.debit(debit_body("CHG-P-1")).status == 201
    assert fake_bank.debit(debit_body("CHG-P-2", accountId="ACC-CLOSED-1")).status == 422


def test_attempts_lists_every_debit_in_arrival_order_with_both_clocks_and_its_answer(fake_bank: FakeBank) -> None:
    fake_bank.set_faults(transientErrorRate=1.0)
    assert fake_bank.debit(debit_body("CHG-A-1")).status == 503
    fake_bank.set_faults()
    assert fake_bank.debit(debit_body("CHG-A-1")).status == 201
    assert fake_bank.debit(debit_body("CHG-A-2")).status == 201
    assert fake_bank.debit(debit_body("CHG-A-1")).status == 200
    assert fake_bank.notify(notification_body("CHG-A-1")).status == 202

    listed = fake_bank.request("GET", "/admin/attempts").body
    attempts = listed["attempts"]
    assert [(a["chargeId"], a["status"], a["outcome"]) for a in attempts] == [
        ("CHG-A-1", 503, "transient"),
        ("CHG-A-1", 201, "created"),
        ("CHG-A-2", 201, "created"),
        ("CHG-A-1", 200, "replay"),
    ]
    assert all(a["kind"] == "debit" for a in attempts)
    monotonic = [a["monotonicMs"] for a in attempts]
    assert monotonic == sorted(monotonic) and monotonic[-1] <= listed["nowMonotonicMs"]
    assert all(abs(a["epochMs"] - time.time() * 1000) < 60_000 for a in attempts)

    only_one = fake_bank.request("GET", "/admin/attempts?chargeId=CHG-A-2").body["attempts"]
    assert [a["chargeId"] for a in only_one] == ["CHG-A-2"]
    notes = fake_bank.request("GET", "/admin/attempts?kind=notification").body["attempts"]
    assert [(a["kind"], a["chargeId"]) for a in notes] == [("notification", "CHG-A-1")]
    assert fake_bank.request("GET", "/admin/attempts?kind=other").status == 400
    fake_bank.reset()
    assert fake_bank.request("GET", "/admin/attempts").body["attempts"] == []


def test_an_attempt_is_timed_on_arrival_not_after_the_injected_latency(fake_bank: FakeBank) -> None:
    fake_bank.set_faults(latencyMs=400)
    sent = time.time() * 1000
    assert fake_bank.debit(debit_body()).status == 201
    (attempt,) = fake_bank.attempts()
    assert attempt["epochMs"] - sent < 300


@pytest.mark.parametrize(
    "faults",
    [
        {"transientErrorStatus": 428},
        {"retryAfter": {"seconds": -1}},
        {"retryAfter": {"seconds": 6, "format": "rfc850"}},
        {"retryAfter": 6},
        {"expiresAfterMs": -5},
    ],
    ids=lambda f: json.dumps(f),
)
def test_invalid_outage_configuration_is_rejected(fake_bank: FakeBank, faults: dict[str, Any]) -> None:
    response = fake_bank.request("POST", "/admin/faults", faults)
    assert response.status == 400 and response.body["code"] == "INVALID_FAULTS"
