"""Checks of the deployment artifacts under deploy/ (run by `make deploy-check`). They use the
local-stack package like the system tests do."""

pytest_plugins = ["tools.local_stack.pytest_plugin"]
