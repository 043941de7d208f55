"""Statistics over arrays (nan-reductions, average, cov, median, quantiles, ...)."""
