"""Numerical checks of the rules in ssad/rules/statistics.py."""

CASES = []
