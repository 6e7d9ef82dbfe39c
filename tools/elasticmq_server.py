"""Launcher for ElasticMQ (an SQS server speaking AWS's JSON protocol) on a free port.

    .venv/bin/python -m tools.elasticmq_server [--port-file F] [--jars DIR]
                                               [--log-level debug|info|warning|error]

A module of the `tools` package, run from the repository root (or with it on PYTHONPATH).

Runs `java -cp 'DIR/*' org.elasticmq.server.Main` (DIR: --jars, else $IC_ELASTICMQ_DIR, else
build/elasticmq, which scripts/install-deps.sh fills from tools/elasticmq/pom.xml) with a
configuration that binds 127.0.0.1 and port 0 and builds queue URLs from each request's Host
header (ElasticMQ's own node address would carry port 0). ElasticMQ logs the port it bound;
once ListQueues answers there, this prints {"event":"listening","port":N,...} on stdout like
the other local-stack servers. SIGTERM/SIGINT stop the JVM and exit 0; the JVM also dies with
this process (PR_SET_PDEATHSIG), so a killed launcher leaks nothing. ElasticMQ's log goes to
stderr.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from tools.common import LEVELS, JsonLogger, StopSignal, announce_listening

REPO_ROOT = Path(__file__).resolve().parent.parent
MAIN_CLASS = "org.elasticmq.server.Main"
BOUND = re.compile(r"Started SQS rest server, bind address [^:\s]+:(\d+)")
STARTUP_TIMEOUT = 60.0  # a cold JVM on a loaded 2-core machine takes 5-15 s
CONFIG = """include classpath("application.conf")
node-address { protocol = http, host = "127.0.0.1", port = 0, context-path = "" }
generate-node-address = true
rest-sqs { enabled = true, bind-port = 0, bind-hostname = "127.0.0.1", sqs-limits = strict }
rest-stats { enabled = false }
"""


def default_jars() -> Path:
    return Path(os.environ.get("IC_ELASTICMQ_DIR", REPO_ROOT / "build" / "elasticmq"))


def _die_with_parent() -> None:
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG


def _answers(port: int) -> bool:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/",
        data=b"{}",
        headers={"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AmazonSQS.ListQueues"},
    )
    try:
        with urllib.request.urlopen(request, timeout=2.0) as response:
            return response.status == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def _pump(stream, sink, found: dict[str, int], bound: threading.Event) -> None:
    """Copies the JVM's output to our stderr and notes the bound port when it is logged."""
    for raw in iter(stream.readline, b""):
        sink.write(raw)
        sink.flush()
        if not bound.is_set() and (match := BOUND.search(raw.decode(errors="replace"))):
            found["port"] = int(match.group(1))
            bound.set()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.elasticmq_server", description=__doc__.split("\n\n")[0])
    parser.add_argument("--port-file", help="also write the bound port to this file")
    parser.add_argument("--jars", type=Path, default=None, help="folder of ElasticMQ's jars")
    parser.add_argument("--log-level", default="info", choices=sorted(LEVELS, key=LEVELS.__getitem__))
    args = parser.parse_args(argv)
    log = JsonLogger("elasticmq-server", args.log_level)
    jars = args.jars or default_jars()
    if not any(jars.glob("elasticmq-server_*.jar")):
        log.error("jars_missing", dir=str(jars), hint="run scripts/install-deps.sh")
        return 2

    stop = StopSignal()
    with tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False) as conf:
        conf.write(CONFIG)
    try:
        java = subprocess.Popen(
            ["java", "-Xmx512m", f"-Dconfig.file={conf.name}", "-cp", f"{jars}/*", MAIN_CLASS],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent,
        )
        found: dict[str, int] = {}
        bound = threading.Event()
        pump = threading.Thread(
            target=_pump, args=(java.stdout, sys.stderr.buffer, found, bound), name="elasticmq-log", daemon=True
        )
        pump.start()
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not (bound.is_set() and _answers(found["port"])):
            if java.poll() is not None or time.monotonic() > deadline or stop.signum is not None:
                log.error("start_failed", exitCode=java.poll(), signal=stop.signum)
                java.kill()
                java.wait()
                return 2
            time.sleep(0.05)
        port = found["port"]
        log.info("started", port=port, jars=str(jars), pid=java.pid)
        announce_listening(port, args.port_file, url=f"http://127.0.0.1:{port}")
        stop.wait(pump)  # the pump ends when the JVM closes its output, i.e. exits
        log.info("stopping", signal=stop.signum)
        java.terminate()
        try:
            java.wait(timeout=10)
        except subprocess.TimeoutExpired:
            java.kill()
            java.wait()
        log.info("stopped", exitCode=java.returncode)
        return 0 if stop.signum is not None else 1
    finally:
        os.unlink(conf.name)


if __name__ == "__main__":
    sys.exit(main())
