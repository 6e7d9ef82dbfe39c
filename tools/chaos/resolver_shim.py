"""The resolver stall: an LD_PRELOAD shim (tools/chaos/stall_resolver.c, built here with cc
and cached under build/chaos/) whose getaddrinfo() of one host name never answers while a flag
file exists. The consumers reach the notification API by that name (NOTIFICATION_URL), so
debits go on while every notification's lookup hangs; no root, no network namespace.

A resolver the shim cannot reach (c-ares, a resolver thread of the consumer's own that reads
/etc/resolv.conf itself) would see no lookup of the name at all: the lookups are logged, and
a stall that saw none is reported as one that never reached the consumers, not as a pass.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from tools.local_stack.paths import REPO_ROOT

SOURCE = Path(__file__).with_name("stall_resolver.c")
HOST = "notify.chaos.invalid"  # .invalid: nothing but the shim resolves it


def build_shim(out_dir: Path = REPO_ROOT / "build" / "chaos") -> Path:
    """The shim's shared object, rebuilt only when the source is newer."""
    library = out_dir / "libstall_resolver.so"
    if library.exists() and library.stat().st_mtime >= SOURCE.stat().st_mtime:
        return library
    out_dir.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(library),
                           str(SOURCE), "-ldl"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"building {library.name} failed: {done.stderr}")
    return library


class SilentResolver:
    """Phases `ok` (the name answers 127.0.0.1) and `silent` (its lookups block)."""

    def __init__(self, work_dir: Path) -> None:
        self.library = build_shim()
        work_dir.mkdir(parents=True, exist_ok=True)
        self.flag = work_dir / "resolver-silent"
        self.flag.unlink(missing_ok=True)
        self.log_path = work_dir / "resolver-lookups.log"
        self.log_path.write_text("")

    def set_phase(self, phase: str) -> None:
        if phase == "silent":
            self.flag.touch()
        elif phase == "ok":
            self.flag.unlink(missing_ok=True)
        else:
            raise ValueError(f"resolver phase {phase!r} is not ok or silent")

    def env(self, notification_port: int) -> dict[str, str]:
        return {"LD_PRELOAD": str(self.library), "CHAOS_RESOLVER_HOST": HOST, "CHAOS_RESOLVER_ADDR": "127.0.0.1",
                "CHAOS_RESOLVER_SILENT": str(self.flag), "CHAOS_RESOLVER_LOG": str(self.log_path),
                "NOTIFICATION_URL": f"http://{HOST}:{notification_port}"}

    def lookups(self) -> list[dict[str, Any]]:
        """Every lookup of the name: {"t", "pid", "answer": silent|answered}."""
        out = []
        for line in self.log_path.read_text().splitlines():
            t, pid, answer = line.split()
            out.append({"t": float(t), "pid": int(pid), "answer": answer})
        return out

    def close(self) -> None:
        self.flag.unlink(missing_ok=True)
