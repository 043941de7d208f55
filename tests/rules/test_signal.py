"""Numerical checks of the rules in ssad/rules/signal.py."""

CASES = []
