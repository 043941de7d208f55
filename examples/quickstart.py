"""Quickstart: differentiate a small model, print the generated gradient, check it.

Run with `make demo` (or `python examples/quickstart.py` with ssad installed).
"""

import numpy as np

import ssad


def loss(W, b, x, y):
    """Mean squared error of a one-layer tanh model."""
    h = np.tanh(x @ W + b)
    err = h - y
    return np.mean(err**2)


def main():
    rng = np.random.default_rng(0)
    W = rng.standard_normal((3, 2))
    b = np.zeros(2)
    x = rng.standard_normal((8, 3))
    y = rng.standard_normal((8, 2))

    print("The gradient ssad generates for `loss` with respect to W and b:\n")
    print(ssad.show(loss, wrt=("W", "b")))

    d_W, d_b = ssad.grad(loss, wrt=("W", "b"))(W, b, x, y)
    print("d_W =\n", np.round(d_W, 4))
    print("d_b =", np.round(d_b, 4))

    # Compare with central finite differences; raises AssertionError on a mismatch.
    ssad.check_grads(loss, (W, b, x, y), wrt=("W", "b"))
    print("\nThe gradient matches central finite differences.")

    # A few steps of gradient descent with the generated function.
    step = ssad.value_and_grad(loss, wrt=("W", "b"))
    for iteration in range(5):
        value, (d_W, d_b) = step(W, b, x, y)
        W, b = W - 0.5 * d_W, b - 0.5 * d_b
        print(f"step {iteration}: loss = {value:.4f}")


if __name__ == "__main__":
    main()
