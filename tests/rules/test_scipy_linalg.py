"""Numerical checks of the rules in ssad/rules/scipy_linalg.py."""

CASES = []
