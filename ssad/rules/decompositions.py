"""Matrix decompositions (np.linalg eig, eigh, svd, qr, ...)."""
