"""Numerical checks of the rules in ssad/rules/polynomials.py."""

CASES = []
