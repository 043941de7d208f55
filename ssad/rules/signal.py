"""Convolution and correlation (np.convolve, np.correlate)."""
