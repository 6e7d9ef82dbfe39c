#!/usr/bin/env python3
"""The ChargeDueEvent consumer written the way AWS Lambda Powertools for Python makes it easy: a
reference for bench/compare/run.py, not part of the service (docs/performance.md, "Side by side
with the Powertools and Spring designs").

The same design as `charge-recovery run` (docs/design.md §3): per message, claim the business
key (chargeId) with one conditional write to DynamoDB, debit the bank with
`Idempotency-Key: <chargeId>`, notify with `<chargeId>:notify`, record the result with a second
write, then delete the message; a duplicate of a finished charge is acknowledged without a debit.
The claim and the record are Powertools' idempotency utility (`idempotent_function` over
`DynamoDBPersistenceLayer`: a conditional PutItem of an INPROGRESS record, then an UpdateItem to
COMPLETED that stores the function's result), keyed on `chargeId` with payload validation over
the other fields (a different payload under the same chargeId raises IdempotencyValidationError
and is dead-lettered, never debited).

Around it, a long-running SQS consumer (Powertools has none outside Lambda): RECEIVERS threads
long-poll ReceiveMessage (10 messages, WaitTimeSeconds 20) while a ThreadPoolExecutor of
WORKERS threads (32) handles the messages (a receive starts when the workers' messages plus
its 10 fit in WORKERS + 10, so one batch waits ready); when every message of a receive is
handled, its acknowledged ones are removed with one DeleteMessageBatch. No heartbeat (ours
extends lease and visibility for long effects; these calls time out after 10 s, the lease is
60 s). boto3 for SQS
and DynamoDB (endpoints, region and credentials from the standard AWS_* variables), urllib3 for
the bank, Powertools' Logger (JSON, INFO: one line per charge).

    CHARGE_QUEUE_URL=... POWERTOOLS_IDEMPOTENCY_TABLE=... CORE_BANKING_URL=http://... \\
        build/compare/powertools-venv/bin/python bench/compare/powertools/consumer.py

Environment: CHARGE_QUEUE_URL, CHARGE_DLQ_URL (optional: dead letters are then only logged),
POWERTOOLS_IDEMPOTENCY_TABLE (hash key `id`, string), CORE_BANKING_URL, NOTIFICATION_URL
(default CORE_BANKING_URL), BANK_TLS_CA_FILE, BANK_TLS_CERT_FILE and BANK_TLS_KEY_FILE (the
bank's CA and our client certificate, as ours reads them), WORKERS (32), RECEIVERS (WORKERS /
10, rounded up), LEASE_SECONDS (60: how long an INPROGRESS record blocks another delivery),
RETENTION_DAYS (30: how long a finished record answers duplicates), LOG_LEVEL (INFO). Stops on
SIGTERM or SIGINT: no new receives, the messages in hand are finished, then exit 0.
"""

from __future__ import annotations

import json
import math
import os
import signal
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from typing import Any

import boto3
import fastjsonschema
import urllib3
from botocore.config import Config

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent_function,
)
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
    IdempotencyValidationError,
)

logger = Logger(service="charge-consumer-powertools", level=os.environ.get("LOG_LEVEL", "INFO").upper())

QUEUE_URL = os.environ["CHARGE_QUEUE_URL"]
DLQ_URL = os.environ.get("CHARGE_DLQ_URL", "")
TABLE = os.environ["POWERTOOLS_IDEMPOTENCY_TABLE"]
BANK_URL = os.environ["CORE_BANKING_URL"].rstrip("/")
NOTIFY_URL = os.environ.get("NOTIFICATION_URL", BANK_URL).rstrip("/")
WORKERS = int(os.environ.get("WORKERS", "32"))
RECEIVERS = int(os.environ.get("RECEIVERS", str(math.ceil(WORKERS / 10))))
LEASE_SECONDS = int(os.environ.get("LEASE_SECONDS", "60"))
RETENTION_DAYS = int(os.environ.get("RETENTION_DAYS", "30"))

# docs/design.md §5 "ChargeDueEvent v1", as JSON Schema. The currency is checked for shape only
# (ours checks the ISO 4217 list) and dueDate for the YYYY-MM-DD form (fastjsonschema's "date").
CHARGE_SCHEMA = {
    "type": "object",
    "required": ["schemaVersion", "chargeId", "accountId", "chargeType", "amountMinor", "currency", "dueDate"],
    "properties": {
        "schemaVersion": {"type": "integer", "enum": [1]},
        "chargeId": {"type": "string", "pattern": "^[A-Za-z0-9._:-]{1,128}$"},
        "accountId": {"type": "string", "pattern": "^[A-Za-z0-9._:-]{1,64}$"},
        "chargeType": {"type": "string", "pattern": "^[A-Z0-9_]{1,64}$"},
        "amountMinor": {"type": "integer", "minimum": 1, "maximum": 1_000_000_000_000},
        "currency": {"type": "string", "pattern": "^[A-Z]{3}$"},
        "dueDate": {"type": "string", "format": "date"},
    },
}
# Powertools' validation utility (`validate(event=..., schema=...)`) runs this same engine but
# compiles the schema on every call; compiled once here, so the reference is not charged for it.
validate_charge = fastjsonschema.compile(CHARGE_SCHEMA)


class LeaseContext:
    """What Powertools reads from a Lambda context: the time the invocation has left, which
    becomes the INPROGRESS record's `in_progress_expiration`. Outside Lambda a constant lease
    does what our lease does: a claim whose holder died can be taken again after LEASE_SECONDS
    (without a context an INPROGRESS record would block its key until it expires)."""

    def get_remaining_time_in_millis(self) -> int:
        return LEASE_SECONDS * 1000


# The bank over HTTPS: the CA that verifies it and a client certificate for mutual TLS, from
# the variables ours reads (boto3 takes AWS_CA_BUNDLE for the AWS endpoints itself).
BANK_TLS = {option: os.environ[name] for option, name in (("ca_certs", "BANK_TLS_CA_FILE"), ("cert_file", "BANK_TLS_CERT_FILE"),
                                                           ("key_file", "BANK_TLS_KEY_FILE")) if os.environ.get(name)}
http = urllib3.PoolManager(
    num_pools=4,
    maxsize=WORKERS,
    block=True,
    retries=False,  # a failed call is a transient outcome; SQS redelivers
    timeout=urllib3.Timeout(connect=2.0, read=10.0),
    headers={"Content-Type": "application/json"},
    **BANK_TLS,
)
boto_config = Config(
    retries={"mode": "standard", "max_attempts": 3},
    connect_timeout=2,
    read_timeout=30,  # above the 20 s long poll
    max_pool_connections=WORKERS + RECEIVERS,
)
sqs = boto3.client("sqs", config=boto_config)
persistence = DynamoDBPersistenceLayer(table_name=TABLE, boto3_client=boto3.client("dynamodb", config=boto_config))


def replayed(response: dict[str, Any], record: Any) -> dict[str, Any]:
    """Powertools' response hook: called when the result comes from the store (a duplicate of a
    finished charge), not from running the function."""
    return {**response, "duplicate": True}


idempotency = IdempotencyConfig(
    event_key_jmespath="chargeId",
    payload_validation_jmespath="[accountId, chargeType, amountMinor, currency, dueDate]",
    raise_on_no_idempotency_key=True,
    expires_after_seconds=RETENTION_DAYS * 86_400,
    response_hook=replayed,
)
idempotency.register_lambda_context(LeaseContext())


class TransientFailure(Exception):
    """The bank did not answer usefully: Powertools deletes the INPROGRESS record, the message
    stays on the queue and comes back after its visibility timeout."""


def post(url: str, key: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    response = http.request("POST", url, body=json.dumps(body).encode(), headers={"Content-Type": "application/json", "Idempotency-Key": key})
    try:
        data = json.loads(response.data) if response.data else {}
    except ValueError:
        data = {}
    return response.status, data if isinstance(data, dict) else {}


@idempotent_function(data_keyword_argument="charge", config=idempotency, persistence_store=persistence)
def process_charge(charge: dict[str, Any]) -> dict[str, Any]:
    """The effect: runs once per chargeId (Powertools claims the key before and records the
    returned dict after); a replay of a finished key returns the recorded dict instead."""
    charge_id = charge["chargeId"]
    try:
        status, reply = post(f"{BANK_URL}/v1/debits", charge_id,
                             {k: charge[k] for k in ("chargeId", "accountId", "amountMinor", "currency", "chargeType")})
    except urllib3.exceptions.HTTPError as e:
        raise TransientFailure(f"debit: {e}") from e
    if status in (409, 422):  # final refusals (docs/design.md §5): recorded, never retried
        return {"status": "FAILED_PERMANENT", "reason": str(reply.get("code") or ("IDEMPOTENCY_KEY_CONFLICT" if status == 409 else "UNPROCESSABLE"))}
    debit_id = reply.get("debitId")
    if status not in (200, 201) or not isinstance(debit_id, str) or not debit_id:
        raise TransientFailure(f"debit answered {status}")
    try:
        notified, _ = post(f"{NOTIFY_URL}/v1/notifications", f"{charge_id}:notify",
                           {"chargeId": charge_id, "accountId": charge["accountId"], "debitId": debit_id,
                            "amountMinor": charge["amountMinor"], "currency": charge["currency"], "chargeType": charge["chargeType"]})
    except urllib3.exceptions.HTTPError:
        notified = 0
    return {"status": "DEBITED" if 200 <= notified < 300 else "DEBITED_NOTIFICATION_FAILED", "debitId": debit_id}


# Powertools configures its persistence layer on the first call and is not safe against 32
# first calls at once (it marks itself configured before it compiles the JMESPath
# expressions); configure it here, with the function name its decorator uses, before any thread.
persistence.configure(config=idempotency, function_name=f"{process_charge.__module__}.{process_charge.__qualname__}")


def dead_letter(message: dict[str, Any], reason: str, detail: str, charge_id: str | None) -> None:
    logger.error("dead-lettered", extra={"failureReason": reason, "failureDetail": detail[:256], "chargeId": charge_id})
    if not DLQ_URL:
        return
    attributes = {"failureReason": {"DataType": "String", "StringValue": reason},
                  "failureDetail": {"DataType": "String", "StringValue": detail[:256] or reason}}
    if charge_id:
        attributes["chargeId"] = {"DataType": "String", "StringValue": charge_id}
    sqs.send_message(QueueUrl=DLQ_URL, MessageBody=message["Body"], MessageAttributes=attributes)


def handle(message: dict[str, Any]) -> bool:
    """One delivery; True when it may be deleted (acknowledged)."""
    try:
        # A JSON number with a fraction or exponent becomes a Decimal, which the schema's
        # "integer" refuses: amountMinor is an integer, never a float (docs/design.md §5).
        charge = json.loads(message["Body"], parse_float=Decimal)
        validate_charge(charge)
    except (ValueError, fastjsonschema.JsonSchemaException) as e:
        dead_letter(message, "INVALID_MESSAGE", str(e), None)
        return True
    charge_id = charge["chargeId"]
    try:
        result = process_charge(charge=charge)
    except IdempotencyValidationError:
        dead_letter(message, "PAYLOAD_MISMATCH", "payload differs from the recorded one", charge_id)
        return True
    except IdempotencyAlreadyInProgressError:
        logger.info("claim decided", extra={"chargeId": charge_id, "outcome": "DUPLICATE_IN_PROGRESS"})
        return False  # back after the visibility timeout, when the holder has probably finished
    except Exception as e:  # transient bank or store failure: the message comes back
        logger.warning("charge not settled", extra={"chargeId": charge_id, "error": f"{type(e).__name__}: {e}"})
        return False
    if result["status"] == "FAILED_PERMANENT":
        if result.get("duplicate"):
            dead_letter(message, "PREVIOUSLY_FAILED", f"charge already failed permanently: {result['reason']}", charge_id)
        else:
            dead_letter(message, "PERMANENT_DEBIT_FAILURE", f"bank refused the debit: {result['reason']}", charge_id)
        return True
    if result.get("duplicate"):
        logger.info("claim decided", extra={"chargeId": charge_id, "outcome": "DUPLICATE_DONE"})
    else:
        logger.info("charge settled", extra={"chargeId": charge_id, "status": result["status"], "debitId": result["debitId"]})
    return True


class Batch:
    """The messages of one ReceiveMessage; the worker that handles the last one deletes the
    acknowledged ones with one DeleteMessageBatch."""

    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.pending = len(messages)
        self.acked: list[dict[str, str]] = []
        self.lock = threading.Lock()

    def done(self, message: dict[str, Any], ack: bool) -> None:
        with self.lock:
            if ack:
                self.acked.append({"Id": str(len(self.acked)), "ReceiptHandle": message["ReceiptHandle"]})
            self.pending -= 1
            entries = self.acked if self.pending == 0 else None
        if entries:
            reply = sqs.delete_message_batch(QueueUrl=QUEUE_URL, Entries=entries)
            for failed in reply.get("Failed", []):
                logger.warning("delete failed", extra={"code": failed.get("Code"), "message": failed.get("Message")})


stopping = threading.Event()
# Messages received (or being received) and not yet handled: a receive of 10 starts once the
# workers' 32 plus one receive's prefetch have room for it, so the workers never wait for a
# receive and a busy queue is read in full batches.
capacity = threading.Condition()
in_hand = 0
LIMIT = WORKERS + 10


def reserve() -> bool:
    global in_hand
    with capacity:
        capacity.wait_for(lambda: in_hand + 10 <= LIMIT or stopping.is_set())
        if stopping.is_set():
            return False
        in_hand += 10
        return True


def release(n: int) -> None:
    global in_hand
    with capacity:
        in_hand -= n
        capacity.notify_all()


def work(batch: Batch, message: dict[str, Any]) -> None:
    try:
        ack = handle(message)
    except Exception:  # never lose the capacity or the batch's count
        logger.exception("handler failed")
        ack = False
    finally:
        release(1)
    batch.done(message, ack)


def receive_loop(pool: ThreadPoolExecutor) -> None:
    while reserve():
        try:
            reply = sqs.receive_message(QueueUrl=QUEUE_URL, MaxNumberOfMessages=10, WaitTimeSeconds=20,
                                        MessageSystemAttributeNames=["ApproximateReceiveCount"])
        except Exception:
            logger.exception("receive failed")
            reply = {}
            time.sleep(1)
        messages = reply.get("Messages", [])
        release(10 - len(messages))
        batch = Batch(messages)
        for message in messages:
            pool.submit(work, batch, message)


def main() -> int:
    def stop(signum: int, _frame: Any) -> None:
        logger.info("stopping", extra={"signal": signum})
        stopping.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    with ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="worker") as pool:
        receivers = [threading.Thread(target=receive_loop, args=(pool,), name=f"receiver-{i}", daemon=True) for i in range(RECEIVERS)]
        for receiver in receivers:
            receiver.start()
        logger.info("consumer started", extra={"workers": WORKERS, "receivers": RECEIVERS, "table": TABLE, "queueUrl": QUEUE_URL})
        while not stopping.wait(0.5):
            pass
        with capacity:  # receivers waiting for room see the stop
            capacity.notify_all()
        # A receive in progress is not interrupted (its messages are handled before the exit);
        # a long poll on an empty queue ends within its 20 s.
        for receiver in receivers:
            receiver.join(timeout=25)
    logger.info("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
