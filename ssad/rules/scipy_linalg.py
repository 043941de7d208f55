"""SciPy's linear algebra (scipy.linalg); registered once SciPy is imported."""
