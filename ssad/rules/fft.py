"""NumPy's FFTs (np.fft)."""
