"""Polynomials and interpolation (polyval, polyfit, vander, interp)."""
