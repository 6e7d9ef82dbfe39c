"""fake-bank: a local stand-in for FinEdge's core-banking and notification APIs (DESIGN §5),
with a ledger tests can read and admin endpoints to inject faults. Run `python -m tools.fake_bank`.
"""
