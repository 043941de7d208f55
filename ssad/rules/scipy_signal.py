"""SciPy's convolution (scipy.signal); registered once SciPy is imported."""
