"""The event loop's lag at 1,024 charges in flight (issue 34): the latency-injected run's
1,024-in-flight row (bench/runs/latency.py: AWS 10 ms, the bank 200 ms, 2% of each at three or
four times that) on the fast+fast stack, with the consumer's ic_event_loop_lag_seconds and
ic_event_loop_stalls_total read from /metrics once the queue is drained, before the stop.

    .venv/bin/python -m bench.runs.loop_lag [--charges 8000] [--build-dir build/release]

The lag is how late the loop's 250 ms heartbeat timer fired; its p50/p99 are the upper bounds of
the histogram buckets they fall in.
"""

from __future__ import annotations

import argparse
import time
import uuid
from pathlib import Path

from bench.runs.latency import AWS, BANKS
from bench.stack import FAST_AWS, STACKS, drain, stack
from tools.local_stack.paths import REPO_ROOT

IN_FLIGHT = 1024
BANK = "200 ms"


def histogram(text: str, name: str) -> list[tuple[float, float]]:
    """(upper bound, cumulative count) of an unlabelled histogram in Prometheus text."""
    out = []
    for line in text.splitlines():
        if line.startswith(name + '_bucket{le="'):
            bound, value = line[len(name + '_bucket{le="') :].split('"} ')
            out.append((float("inf") if bound == "+Inf" else float(bound), float(value)))
    return out


def quantile(buckets: list[tuple[float, float]], q: float) -> float:
    total = buckets[-1][1]
    return next(bound for bound, count in buckets if count >= q * total)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--charges", type=int, default=8000)
    parser.add_argument("--build-dir", type=Path, default=REPO_ROOT / "build" / "release")
    args = parser.parse_args()
    label, sqs_kind, dynamodb_kind = next(s for s in STACKS if s[0] == FAST_AWS)
    with stack(label, sqs_kind, dynamodb_kind, args.build_dir) as st:
        proxied = {"AWS_ENDPOINT_URL_SQS": st.proxy("lag-delay-sqs", st.env["AWS_ENDPOINT_URL_SQS"], AWS).url,
                   "AWS_ENDPOINT_URL_DYNAMODB": st.proxy("lag-delay-dynamodb", st.env["AWS_ENDPOINT_URL_DYNAMODB"], AWS).url}
        bank_url = st.proxy("lag-delay-bank", st.bank_url, BANKS[BANK]).url
        queues = st.provision()
        debits0 = st.bank_stats()["debits"]
        st.send(queues, args.charges, 0.0, f"LAG-{uuid.uuid4().hex[:6]}")
        t0 = time.monotonic()
        consumer = st.start_consumer({**queues, **proxied}, "consumer-lag", bank_url=bank_url,
                                     WORKERS=str(IN_FLIGHT))
        drain(st, queues, [consumer], debits0 + args.charges)
        seconds = time.monotonic() - t0
        status, text = consumer.get("/metrics")
        assert status == 200, status
        st.stop(consumer)
    lag = histogram(text, "ic_event_loop_lag_seconds")
    stalls = next(float(line.split()[1]) for line in text.splitlines() if line.startswith("ic_event_loop_stalls_total "))
    print(f"{args.charges} charges at {IN_FLIGHT} in flight, bank {BANK}: {args.charges / seconds:.0f} charges/s; "
          f"loop lag p50 <= {quantile(lag, 0.5) * 1000:g} ms, p99 <= {quantile(lag, 0.99) * 1000:g} ms "
          f"({lag[-1][1]:.0f} samples); stalls > 100 ms: {stalls:.0f}")
    print("buckets (le seconds, cumulative):", ", ".join(f"{b:g}:{c:.0f}" for b, c in lag))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
