"""Local-stack tooling (fake bank, moto launcher) for tests and the demo; run from the repo root."""
