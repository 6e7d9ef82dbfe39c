"""The floor under the consumer's figures (bench/dependency_floor.cpp, no consumer code): the
resident memory of its libraries alone, initialised (with the image's environment), and the
CPU of bare libcurl exchanges against the fast bank, 32 in flight, both ways: blocking on 32
threads (the threaded transport) and on one epoll thread through curl's multi_socket API (the
event-driven transport). The report scales them by the consumer's exchanges per charge.
Measured before anything else runs on the stack, so nothing competes with it."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

from bench.stack import Stack
from tools.local_stack.charge_recovery import image_environment

# The exchange shapes, about the consumer's: a signed DynamoDB request (a ~1 KB body; content
# type, target, date, SDK and Authorization headers) and a bank call.
SHAPES = {"aws": ("1000", "6", "450"), "bank": ("300", "3", "120")}


def run(st: Stack) -> dict[str, Any]:
    tool = str(st.build / "bench/ic_bench_dependency_floor")
    env = {**os.environ, **image_environment()}
    memory = json.loads(subprocess.run([tool, "memory"], env=env, capture_output=True, text=True, timeout=60, check=True).stdout)
    transports: dict[str, dict[str, Any]] = {}
    for transport, flags in (("blocking", []), ("eventLoop", ["--event-loop"])):
        shapes = transports.setdefault(transport, {})
        for name, (body, headers, header_bytes) in SHAPES.items():
            out = subprocess.run([tool, "exchanges", "--url", st.bank_url + "/v1/notifications", "--threads", "32", "--requests", "2000",
                                  "--body-bytes", body, "--headers", headers, "--header-bytes", header_bytes, *flags],
                                 env=env, capture_output=True, text=True, timeout=300)
            if out.returncode != 0:
                raise RuntimeError(f"dependency_floor exchanges exited {out.returncode}: {out.stderr[-2000:]}")
            shapes[name] = json.loads(out.stdout)
    return {"memoryKiB": memory, "exchanges": transports["eventLoop"], "blockingExchanges": transports["blocking"]}
