"""Numerical checks of the rules in ssad/rules/scipy_integrate.py."""

CASES = []
