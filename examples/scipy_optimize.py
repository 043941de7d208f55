"""Feed ssad's derivatives to `scipy.optimize.minimize`.

`jac=ssad.grad(f)` gives quasi-Newton methods (BFGS, L-BFGS-B) an exact gradient,
and a Hessian-vector product, forward mode over the generated gradient
(`ssad.jvp(ssad.grad(f), (x,), (v,))`), gives Newton-CG its `hessp` without ever
forming the Hessian. Two problems: the Rosenbrock function in a few dimensions,
whose derivatives are checked against scipy's own `rosen_der` and
`rosen_hess_prod`, and an L2-regularised logistic regression on synthetic data.

Run with `python examples/scipy_optimize.py` (needs scipy).
"""

import numpy as np
from scipy.optimize import minimize, rosen, rosen_der, rosen_hess_prod

import ssad


def rosenbrock(x):
    """The n-dimensional Rosenbrock function; its minimum is 0, at x = (1, ..., 1)."""
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def logistic_loss(w, X, y, strength):
    """Mean logistic loss of the labels y in {-1, +1}, plus an L2 penalty on the weights."""
    margins = y * (X @ w)
    return np.mean(np.logaddexp(0.0, -margins)) + 0.5 * strength * np.sum(w * w)


def hessian_vector_product(f):
    """`hessp(x, v, *args)`: the Hessian of f at x times v, by forward over reverse."""
    gradient = ssad.grad(f)

    def hessp(x, v, *args):
        primals = (x, *args)
        tangents = (v,) + (None,) * len(args)
        return ssad.jvp(gradient, primals, tangents)[1]

    return hessp


def run(method, f, x0, args=(), **options):
    """Minimize f from x0 with `method`, using ssad for the derivatives it needs."""
    derivatives = {"jac": ssad.grad(f)}
    if method == "Newton-CG":
        derivatives["hessp"] = hessian_vector_product(f)
    result = minimize(f, x0, args=args, method=method, **derivatives, **options)
    counts = f"{result.nfev} f, {result.njev} gradient"
    if method == "Newton-CG":
        counts += f", {result.nhev} Hessian-vector"
    note = "" if result.success else f"; stopped: {result.message}"
    print(f"  {method:<10} f = {result.fun:.6g} after {result.nit:3d} iterations ({counts} evaluations){note}")
    return result


def rosenbrock_demo(dimensions, rng):
    print(f"Rosenbrock function in {dimensions} dimensions")
    x0 = rng.uniform(-1.5, 1.5, dimensions)
    v = rng.standard_normal(dimensions)
    gradient_error = np.max(np.abs(ssad.grad(rosenbrock)(x0) - rosen_der(x0)))
    hessp_error = np.max(np.abs(hessian_vector_product(rosenbrock)(x0, v) - rosen_hess_prod(x0, v)))
    print(f"  f(x0) = {rosenbrock(x0):.6g} (scipy.optimize.rosen: {rosen(x0):.6g})")
    print(f"  largest difference from rosen_der: {gradient_error:.1e}; from rosen_hess_prod: {hessp_error:.1e}")
    results = {method: run(method, rosenbrock, x0) for method in ("BFGS", "L-BFGS-B", "Newton-CG")}
    distance = max(np.max(np.abs(r.x - 1.0)) for r in results.values())
    print(f"  largest distance of a solution from (1, ..., 1): {distance:.1e}")
    return {"gradient_error": gradient_error, "hessp_error": hessp_error, "results": results}


def logistic_demo(samples, features, rng, strength=0.1):
    print(f"L2-regularised logistic regression: {samples} samples, {features} features")
    X = rng.standard_normal((samples, features))
    true_w = rng.standard_normal(features)
    y = np.where(X @ true_w + 0.5 * rng.standard_normal(samples) > 0, 1.0, -1.0)
    args = (X, y, strength)
    w0 = np.zeros(features)
    results = {method: run(method, logistic_loss, w0, args) for method in ("L-BFGS-B", "Newton-CG")}
    w = results["Newton-CG"].x
    gradient_norm = float(np.linalg.norm(ssad.grad(logistic_loss)(w, *args)))
    agreement = float(np.max(np.abs(results["L-BFGS-B"].x - w)))
    accuracy = float(np.mean(np.sign(X @ w) == y))
    print(f"  gradient norm at the Newton-CG solution: {gradient_norm:.1e}")
    print(f"  largest difference between the two solutions' weights: {agreement:.1e}")
    print(f"  training accuracy: {accuracy:.3f}")
    return {"results": results, "gradient_norm": gradient_norm, "agreement": agreement, "accuracy": accuracy}


def main(dimensions=10, samples=500, features=20, seed=0):
    rng = np.random.default_rng(seed)
    rosen_summary = rosenbrock_demo(dimensions, rng)
    print()
    logistic_summary = logistic_demo(samples, features, rng)
    return {"rosenbrock": rosen_summary, "logistic": logistic_summary}


if __name__ == "__main__":
    main()
