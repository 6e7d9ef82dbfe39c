"""`python -m tools.chaos --help` (from the repository root)."""

from tools.chaos.runner import main

raise SystemExit(main())
