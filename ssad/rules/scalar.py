"""Rules: scalar (being written)."""
