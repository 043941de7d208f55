"""Rules: elementwise (being written)."""
