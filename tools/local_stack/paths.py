"""Where things are: the repository, the Python that runs the local-stack servers, and the
C++ build. One place for the conventions that scripts/run-pytest.sh, the Makefile and the
C++ tests share (IC_BUILD_DIR, default build/dev; the binary at src/app/charge-recovery).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
# The servers run under the interpreter that runs us (the project venv), so they see the same
# pinned moto and boto3.
PYTHON = sys.executable


def build_dir() -> Path:
    """Where the C++ binaries are: $IC_BUILD_DIR (set by scripts/run-pytest.sh), else build/dev."""
    return Path(os.environ.get("IC_BUILD_DIR", REPO_ROOT / "build" / "dev"))
