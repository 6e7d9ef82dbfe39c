"""A perf profile of `charge-recovery run` draining ElasticMQ + dynalite (docs/performance-profile.md).

Starts the stack and one consumer (WORKERS=32, the image's environment, as bench/stack.py
does), warms it up with a first drain, pauses it (SIGSTOP) while fresh charges are sent,
then records it with `perf record -e cpu-clock --call-graph dwarf` from its resume until the
queue is drained. This VM exposes no hardware counters, so cpu-clock sampling is the event.
Not part of `make bench`: it needs perf (Debian's `linux-perf`, which `make deps` does not
install). Run it from the root as `.venv/bin/python -m bench.runs.profile`; read the result
with, e.g.:

    perf report -i build/bench/perf.data --no-children --sort dso,symbol --stdio -g none
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import time
from pathlib import Path

from bench.measure import cpu_seconds
from bench.stack import OUT, drain, stack
from tools.local_stack.paths import REPO_ROOT


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--charges", type=int, default=6000, help="the recorded drain's fresh charges")
    parser.add_argument("--warm-up", type=int, default=2000, help="charges drained before recording")
    parser.add_argument("--output", type=Path, default=OUT / "perf.data")
    parser.add_argument("--build-dir", type=Path, default=REPO_ROOT / "build" / "release")
    args = parser.parse_args()
    args.output.parent.mkdir(parents=True, exist_ok=True)
    with stack("profile", "elasticmq", "dynalite", args.build_dir) as st:
        env = st.provision()
        st.send(env, args.warm_up, 0.0, "WARM")
        consumer = st.start_consumer(env, "consumer")
        drain(st, env, [consumer], args.warm_up)
        os.kill(consumer.pid, signal.SIGSTOP)
        st.send(env, args.charges, 0.0, "PROF")
        perf = subprocess.Popen(["perf", "record", "-e", "cpu-clock", "-F", "1999", "--call-graph", "dwarf,16384",
                                 "-p", str(consumer.pid), "-o", str(args.output)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(1)  # perf attaches before the consumer resumes; nothing to poll for
        cpu0, t0 = cpu_seconds(consumer.pid), time.monotonic()
        os.kill(consumer.pid, signal.SIGCONT)
        drain(st, env, [consumer], args.warm_up + args.charges)
        seconds, cpu = time.monotonic() - t0, cpu_seconds(consumer.pid) - cpu0
        perf.send_signal(signal.SIGINT)
        _, errors = perf.communicate(timeout=120)
        st.stop(consumer)
    if perf.returncode not in (0, -signal.SIGINT):  # perf may end by the SIGINT that stops it
        print(f"perf record exited {perf.returncode}: {errors}")
        return 1
    print(f"{args.charges} charges in {seconds:.1f} s, {1000 * cpu / args.charges:.3f} CPU ms per charge "
          f"(perf's sampling included); {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
