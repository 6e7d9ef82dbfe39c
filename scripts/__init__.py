"""Runnable as modules from the repository root (`python -m scripts.demo`), which makes
the `tools` package importable; a regular package so no installed `scripts` shadows it."""
