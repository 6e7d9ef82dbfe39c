"""The system tests' fixtures (moto, fake_bank, processes, charge_stack, consumers, ...) come
from the local-stack package's pytest plugin, so the demo and the benchmark drive the very
same machinery; see tools/local_stack/pytest_plugin.py and tools/README.md."""

pytest_plugins = ["tools.local_stack.pytest_plugin"]
