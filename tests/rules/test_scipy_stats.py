"""Numerical checks of the rules in ssad/rules/scipy_stats.py."""

CASES = []
