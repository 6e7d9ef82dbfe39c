"""bench/compare: our consumer beside the Powertools and Spring reference designs (run.py)."""
