"""Local-stack tooling, run from the repository root: the fake bank (tools/fake_bank), the moto
launcher (tools/moto_server.py) and the package that starts and drives them (tools/local_stack)
for the system tests, the demo and the benchmark."""
