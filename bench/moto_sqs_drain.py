#!/usr/bin/env python3
"""How fast tools/moto_server.py drains a pre-filled SQS queue, and whether it loses anything
under concurrency (a measurement, not a test; the test is tests/system/test_moto_launcher.py).

Fills a queue with --messages messages (SendMessageBatch from 4 threads), then --threads
threads each receive 10 (WaitTimeSeconds=1) and delete what they got in one batch until the
queue is empty or --timeout passes. Prints one JSON line: fill and drain rates in messages/s,
distinct messages received, deletes acknowledged, and what is left on the queue.

    .venv/bin/python -m bench.moto_sqs_drain --messages 2600 --threads 8
    .venv/bin/python -m bench.moto_sqs_drain --launcher-arg=--no-sqs-lock   # plain moto's locking

Run as a module from the repository root (it starts the launcher through tools/local_stack).
"""
from __future__ import annotations

import argparse
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from tools.local_stack import ProcessManager, start_moto
from tools.local_stack.paths import REPO_ROOT


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=2600)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--no-sqs-lock", action="store_true", help="start the launcher with --no-sqs-lock")
    args = parser.parse_args()
    manager = ProcessManager(REPO_ROOT / "build" / "bench-logs")
    try:
        moto = start_moto(manager, sqs_lock=not args.no_sqs_lock)
        sqs = moto.sqs(max_pool_connections=args.threads + 4)
        url = sqs.create_queue(QueueName="drain", Attributes={"VisibilityTimeout": "60"})["QueueUrl"]

        def fill(start: int) -> None:
            for base in range(start, args.messages, 40):
                entries = [{"Id": str(i), "MessageBody": f"m{base + i}"} for i in range(min(10, args.messages - base))]
                sqs.send_message_batch(QueueUrl=url, Entries=entries)

        began = time.monotonic()
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(fill, range(0, 40, 10)))
        filled = time.monotonic()

        received: set[str] = set()
        deleted = 0
        lock = threading.Lock()
        deadline = filled + args.timeout

        def drain() -> None:
            nonlocal deleted
            idle = 0
            while time.monotonic() < deadline and idle < 3:
                got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", [])
                if not got:
                    idle += 1
                    continue
                idle = 0
                reply = sqs.delete_message_batch(
                    QueueUrl=url,
                    Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(got)],
                )
                with lock:
                    received.update(m["Body"] for m in got)
                    deleted += len(reply.get("Successful", []))

        with ThreadPoolExecutor(args.threads) as pool:
            list(pool.map(lambda _: drain(), range(args.threads)))
        drained = time.monotonic()
        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
        left = int(attributes["ApproximateNumberOfMessages"]) + int(attributes["ApproximateNumberOfMessagesNotVisible"])
        drain_seconds = drained - filled - 3.0  # each thread's three idle 1 s polls at the end
        print(
            json.dumps(
                {
                    "messages": args.messages,
                    "threads": args.threads,
                    "sqsLock": not args.no_sqs_lock,
                    "fillPerSecond": round(args.messages / (filled - began), 1),
                    "drainPerSecond": round(len(received) / max(drain_seconds, 1e-3), 1),
                    "drainSeconds": round(drain_seconds, 1),
                    "distinctReceived": len(received),
                    "deletesAcknowledged": deleted,
                    "leftOnQueue": left,
                }
            )
        )
        return 0 if left == 0 and len(received) == args.messages else 1
    finally:
        manager.stop_all()


if __name__ == "__main__":
    raise SystemExit(main())
