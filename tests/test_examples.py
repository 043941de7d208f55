"""The scripts in examples/, run small: each must work and show what it claims to show."""

import importlib.util
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import ssad

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"
SCRIPTS = sorted(path.stem for path in EXAMPLES.glob("*.py"))


def load(name):
    """Import examples/<name>.py as a module (examples/ is not a package)."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", SCRIPTS)
def test_every_example_says_what_it_shows_and_how_to_run_it(name):
    module = load(name)
    assert module.__doc__, f"examples/{name}.py has no module docstring"
    assert f"python examples/{name}.py" in module.__doc__, "the docstring should say how to run the script"
    assert callable(module.main)


def test_quickstart_runs_as_a_script():
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "quickstart.py")], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "def grad_loss(W, b, x, y):" in done.stdout
    assert "The gradient matches central finite differences." in done.stdout
    losses = [float(line.rsplit("=", 1)[1]) for line in done.stdout.splitlines() if line.startswith("step ")]
    assert len(losses) == 5 and losses[-1] < losses[0]


# ----- MLP training -----


def test_mlp_gradient_of_a_dict_of_parameters_matches_finite_differences():
    mlp = load("mlp_training")
    rng = np.random.default_rng(1)
    params = mlp.init_params(2, 5, 3, rng)
    x, labels = rng.standard_normal((7, 2)), rng.integers(0, 3, 7)
    ssad.check_grads(mlp.loss, (params, x, labels))
    value, d_params = ssad.value_and_grad(mlp.loss)(params, x, labels)
    assert value == pytest.approx(mlp.loss(params, x, labels))
    assert set(d_params) == set(params)
    assert all(d_params[name].shape == params[name].shape for name in params)


def test_mlp_training_lowers_the_loss_and_learns(capsys):
    mlp = load("mlp_training")
    summary = mlp.main(points_per_class=100, steps=400, report_every=100)
    losses = summary["losses"]
    assert len(losses) == 5
    assert losses[-1] < 0.5 * losses[0]
    assert summary["test_accuracy"] > 0.8
    output = capsys.readouterr().out
    assert "step   400: training loss" in output and "held out (chance 0.333)" in output


# ----- scipy.optimize -----


def test_rosenbrock_derivatives_agree_with_scipy():
    from scipy.optimize import rosen_der, rosen_hess_prod

    example = load("scipy_optimize")
    rng = np.random.default_rng(2)
    x, v = rng.uniform(-2.0, 2.0, 7), rng.standard_normal(7)
    np.testing.assert_allclose(ssad.grad(example.rosenbrock)(x), rosen_der(x), rtol=1e-12, atol=1e-10)
    hessp = example.hessian_vector_product(example.rosenbrock)
    np.testing.assert_allclose(hessp(x, v), rosen_hess_prod(x, v), rtol=1e-12, atol=1e-10)


def test_logistic_loss_derivatives_match_finite_differences():
    example = load("scipy_optimize")
    rng = np.random.default_rng(3)
    w, X, y = rng.standard_normal(4), rng.standard_normal((10, 4)), np.sign(rng.standard_normal(10))
    ssad.check_grads(example.logistic_loss, (w, X, y, 0.1), order=2)
    # The Hessian-vector product passes the extra arguments through, as scipy calls it.
    v = rng.standard_normal(4)
    hessian = ssad.hessian(example.logistic_loss)(w, X, y, 0.1)
    np.testing.assert_allclose(example.hessian_vector_product(example.logistic_loss)(w, v, X, y, 0.1), hessian @ v)


def test_scipy_optimize_converges_with_ssad_derivatives(capsys):
    example = load("scipy_optimize")
    summary = example.main(dimensions=4, samples=100, features=5)
    rosenbrock = summary["rosenbrock"]
    assert rosenbrock["gradient_error"] < 1e-9 and rosenbrock["hessp_error"] < 1e-9
    for method, result in rosenbrock["results"].items():
        assert result.success, method
        np.testing.assert_allclose(result.x, np.ones(4), atol=1e-2, err_msg=method)
    logistic = summary["logistic"]
    assert all(result.success for result in logistic["results"].values())
    assert logistic["gradient_norm"] < 1e-5 and logistic["agreement"] < 1e-3
    output = capsys.readouterr().out
    assert "Newton-CG" in output and "Hessian-vector evaluations" in output


# ----- BPR matrix factorization -----


def test_bpr_gradient_with_repeated_rows_matches_finite_differences():
    example = load("bpr")
    rng = np.random.default_rng(4)
    U, V = rng.standard_normal((6, 3)), rng.standard_normal((9, 3))
    users, positives, negatives = np.array([0, 1, 1, 5]), np.array([2, 2, 3, 8]), np.array([0, 4, 2, 7])
    ssad.check_grads(example.bpr_loss, (U, V, users, positives, negatives, 0.01), wrt=("U", "V"))


def test_bpr_training_improves_held_out_auc(capsys):
    example = load("bpr")
    history = example.main(users=100, items=300, interactions=3000, factors=8, epochs=5, batch=256)
    assert len(history["loss"]) == 5 and len(history["auc"]) == 6
    assert history["loss"][-1] < history["loss"][0]
    assert history["auc"][-1] > history["auc"][0] + 0.15
    output = capsys.readouterr().out
    assert "100 users, 300 items, 3000 interactions" in output and "epoch  5:" in output


def test_bpr_with_sparse_row_gradients_trains_as_with_dense_ones(capsys):
    example = load("bpr")
    small = dict(users=100, items=300, interactions=3000, factors=8, epochs=3, batch=256)
    runs = example.compare(**small)
    np.testing.assert_allclose(runs["sparse"]["loss"], runs["dense"]["loss"], rtol=1e-12)
    assert runs["sparse"]["auc"] == runs["dense"]["auc"]
    assert "median" in capsys.readouterr().out


def test_bpr_compiled_with_numba_trains_as_the_numpy_gradient_does(capsys):
    pytest.importorskip("numba")
    example = load("bpr")
    small = dict(users=100, items=300, interactions=3000, factors=8, epochs=3, batch=256)
    numpy_history = example.main(**small)
    compiled_history = example.main(**small, compile="strict")
    np.testing.assert_allclose(compiled_history["loss"], numpy_history["loss"], rtol=1e-10)
    assert compiled_history["auc"] == numpy_history["auc"]


# ----- ODE fit -----


def test_ode_fit_recovers_the_decay_rate(capsys):
    example = load("ode_fit")
    estimates = example.main(true_k=0.8, k0=0.1, steps=50, iterations=10)
    assert abs(estimates[-1] - 0.8) < 0.02
    assert abs(estimates[-1] - 0.8) < 0.1 * abs(estimates[0] - 0.8)
    output = capsys.readouterr().out
    assert "match central finite differences" in output and "fitted k = 0.79" in output


def test_ode_misfit_gradient_matches_finite_differences():
    example = load("ode_fit")
    forcing = np.sin(0.1 * np.arange(30))
    observed = example.simulate(0.5, 1.0, forcing, 0.1)
    args = (0.3, 1.0, forcing, 0.1, observed)
    ssad.check_grads(example.misfit, args, wrt=("k", "y0"))
    assert ssad.grad(example.misfit)(0.5, 1.0, forcing, 0.1, observed) == pytest.approx(0.0, abs=1e-12)


# ----- Least squares on a Dask cluster -----


def test_dask_example_fits_chunked_data_on_a_cluster_with_a_lazy_gradient(capsys):
    pytest.importorskip("dask.distributed")
    example = load("dask_gradient")
    w, exact = example.main(n_rows=6_000, n_features=3, chunk_rows=1_500, steps=30)
    printed = capsys.readouterr().out
    assert "in 4 chunks of 1500 rows" in printed
    assert "the gradient is a dask.array.core.Array of shape (3,)" in printed
    assert "within 1e-6 of the least-squares solution: True" in printed
    np.testing.assert_allclose(w, exact, atol=1e-6)
