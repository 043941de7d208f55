"""A least-squares fit whose data is a chunked dask array, differentiated by ssad.

ssad's gradient is plain NumPy code, and every NumPy function it calls dispatches
to dask when its argument is a dask array. So `ssad.grad(loss)` applied to dask
data returns a lazy dask array: a task graph, chunk by chunk, that the Dask cluster
computes when asked. The data never has to fit in one process; only the parameters
(a few numbers here) travel back to the caller after each step.

The script fits the weights of a linear model to data generated on the workers, by
gradient descent, and checks the result against the normal equations.

Run with `python examples/dask_gradient.py` (needs the `dask` extra:
`pip install -e '.[dask]'`).
"""

import dask.array as da
import numpy as np
from dask.distributed import Client, LocalCluster

import ssad


def loss(w, X, y):
    """The mean squared residual of the linear model X @ w."""
    residual = X @ w - y
    return np.mean(residual**2)


def make_data(n_rows, n_features, chunk_rows, seed=0):
    """Features, noisy targets and the true weights; the arrays are dask arrays of
    `chunk_rows` rows per chunk, generated chunk by chunk where they are computed."""
    random = da.random.RandomState(seed)
    X = random.standard_normal((n_rows, n_features), chunks=(chunk_rows, n_features))
    w_true = np.linspace(-1.0, 1.0, n_features)
    y = X @ w_true + 0.1 * random.standard_normal(n_rows, chunks=chunk_rows)
    return X, y, w_true


def fit(X, y, client, steps=25, rate=0.25):
    """Gradient descent on `loss`; each step computes one lazy gradient on the cluster."""
    d_loss = ssad.grad(loss)
    w = np.zeros(X.shape[1])
    for _ in range(steps):
        w = w - rate * client.compute(d_loss(w, X, y)).result()
    return w


def main(n_rows=200_000, n_features=5, chunk_rows=25_000, steps=25):
    with (
        LocalCluster(
            n_workers=1, threads_per_worker=2, processes=False, protocol="tcp", host="127.0.0.1", dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        X, y, w_true = make_data(n_rows, n_features, chunk_rows)
        X, y = client.persist([X, y])  # generated once, kept in the workers' memory
        print(f"X: {X.shape[0]} x {X.shape[1]} floats in {X.numblocks[0]} chunks of {chunk_rows} rows")

        gradient = ssad.grad(loss)(np.zeros(n_features), X, y)
        print(f"the gradient is a {type(gradient).__module__}.{type(gradient).__name__} of shape {gradient.shape}")
        print(f"computed on the cluster: {np.round(client.compute(gradient).result(), 3)}")

        w = fit(X, y, client, steps=steps)
        exact = np.linalg.solve(*client.compute([X.T @ X, X.T @ y], sync=True))
        print(f"after {steps} steps of gradient descent: w = {np.round(w, 2) + 0.0}")
        print(f"true weights:                          {np.round(w_true, 2) + 0.0}")
        print(f"within 1e-6 of the least-squares solution: {np.allclose(w, exact, rtol=0, atol=1e-6)}")
        print(f"loss: {client.compute(loss(w, X, y)).result():.4f}")
    return w, exact


if __name__ == "__main__":
    main()
