"""Entry point of `python -m tools.fake_bank` (run from the repository root)."""

import sys

from tools.fake_bank.server import main

sys.exit(main())
