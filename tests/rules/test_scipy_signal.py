"""Numerical checks of the rules in ssad/rules/scipy_signal.py."""

CASES = []
