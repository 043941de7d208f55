"""Numerical checks of the rules in ssad/rules/fft.py."""

CASES = []
