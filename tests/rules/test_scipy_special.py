"""Numerical checks of the rules in ssad/rules/scipy_special.py."""

CASES = []
