"""SciPy's special functions (scipy.special); registered once SciPy is imported."""
