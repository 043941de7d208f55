"""SciPy's distributions (scipy.stats); registered once SciPy is imported."""
