"""Rules: reductions (being written)."""
