"""Rules: shape (being written)."""
