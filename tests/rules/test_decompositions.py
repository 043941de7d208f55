"""Numerical checks of the rules in ssad/rules/decompositions.py."""

CASES = []
