"""Models of the kind autograd users write against `scipy.special` and `scipy.stats`
(Gaussian processes, black-box variational inference, mixtures, negative-binomial
fits, ICA, Poisson and logistic regression, Dirichlet posteriors, spectral losses),
written with plain `numpy`/`scipy` imports in the styles people use, differentiated
unchanged. Each is checked against autograd running the same function (first order,
and a Hessian-vector product both ways ssad has: see tests/oracle.py), and against
central differences."""

import numpy as np
import pytest
import scipy.special
import scipy.stats
import scipy.stats as st
from scipy.special import expit, gammaln, log_expit, logsumexp
from scipy.stats import multivariate_normal, norm

import ssad
from ssad.testing import numerical_gradient
from tests import oracle

rng = np.random.default_rng(1907)
X1 = np.linspace(-2.0, 2.0, 7)
Y1 = np.sin(X1) + 0.1 * rng.standard_normal(7)


def gp_log_marginal_likelihood(params, x, y):
    """An RBF-kernel Gaussian process, its hyperparameters on a log scale."""
    amplitude, lengthscale, noise = np.exp(params[0]), np.exp(params[1]), np.exp(params[2])
    distances = (x[:, None] - x[None, :]) / lengthscale
    cov = amplitude * np.exp(-0.5 * distances**2) + (noise + 1e-6) * np.eye(len(x))
    return multivariate_normal.logpdf(y, np.zeros(len(x)), cov)


def gp_by_cholesky(params, x, y):
    amplitude, lengthscale, noise = np.exp(params[0]), np.exp(params[1]), np.exp(params[2])
    cov = amplitude * np.exp(-0.5 * ((x[:, None] - x[None, :]) / lengthscale) ** 2) + noise * np.eye(len(x))
    low = np.linalg.cholesky(cov)
    alpha = np.linalg.solve(cov, y)
    return -0.5 * np.dot(y, alpha) - np.sum(np.log(np.diag(low))) - 0.5 * len(x) * np.log(2 * np.pi)


def log_density(z):
    """An unnormalized 2-D banana-shaped posterior."""
    mu, log_sigma = z[:, 0], z[:, 1]
    sigma_density = norm.logpdf(log_sigma, 0, 1.35)
    mu_density = norm.logpdf(mu, 0, np.exp(log_sigma))
    return sigma_density + mu_density


EPS = rng.standard_normal((5, 2))


def variational_objective(params):
    """Black-box variational inference with a diagonal Gaussian and fixed draws."""
    mean, log_std = params[:2], params[2:]
    samples = EPS * np.exp(log_std) + mean
    entropy = 0.5 * 2 * (1.0 + np.log(2 * np.pi)) + np.sum(log_std)
    return -(entropy + np.mean(log_density(samples)))


def mixture_log_likelihood(params, data):
    """A 3-component Gaussian mixture; weights by log-softmax, responsibilities by logsumexp."""
    log_weights = params[:3] - logsumexp(params[:3])
    means, log_stds = params[3:6], params[6:9]
    per_component = st.norm.logpdf(data[:, None], means, np.exp(log_stds)) + log_weights
    return np.sum(logsumexp(per_component, axis=1))


DATA = np.concatenate([rng.normal(-1.0, 0.5, 6), rng.normal(1.5, 0.3, 5)])
COUNTS = np.array([3.0, 0.0, 7.0, 2.0, 4.0, 11.0, 1.0, 5.0])


def negative_binomial_log_likelihood(params, counts):
    r, p = np.exp(params[0]), expit(params[1])
    terms = gammaln(counts + r) - gammaln(r) - gammaln(counts + 1) + counts * np.log(p) + r * np.log1p(-p)
    return np.sum(terms)


SIGNALS = rng.standard_normal((4, 3))


def ica_log_likelihood(weights, signals):
    """Independent components with Student-t sources: the unmixing matrix's likelihood."""
    unmixing = weights.reshape(3, 3)
    latents = signals @ unmixing.T
    return np.sum(scipy.stats.t.logpdf(latents, 2.5)) + len(signals) * np.linalg.slogdet(unmixing)[1]


FEATURES = rng.standard_normal((6, 3))
LABELS = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.0])


def logistic_log_likelihood(w, features, labels):
    logits = features @ w
    return np.sum(labels * log_expit(logits) + (1 - labels) * log_expit(-logits))


def poisson_regression(w, features, counts):
    rates = np.exp(features @ w)
    return np.sum(scipy.stats.poisson.logpmf(counts[:6], rates))


def dirichlet_posterior(log_alpha, proportions):
    return scipy.stats.dirichlet.logpdf(proportions, np.exp(log_alpha)) + np.sum(scipy.special.gammaln(log_alpha**2))


def spectral_loss(x):
    spectrum = np.fft.rfft(x * np.hanning(len(x)))
    power = np.abs(spectrum) ** 2
    return np.sum(np.log1p(power) * np.arange(len(power)))


CASES = [
    (gp_log_marginal_likelihood, (np.array([0.1, -0.3, -1.5]), X1, Y1)),
    (gp_by_cholesky, (np.array([0.2, 0.1, -1.2]), X1, Y1)),
    (variational_objective, (np.array([0.3, -0.2, -0.5, 0.1]),)),
    (mixture_log_likelihood, (np.array([0.1, -0.2, 0.3, -1.2, 0.4, 1.6, -0.6, -0.9, -1.1]), DATA)),
    (negative_binomial_log_likelihood, (np.array([0.8, -0.3]), COUNTS)),
    (ica_log_likelihood, (np.eye(3).ravel() + 0.2 * rng.standard_normal(9), SIGNALS)),
    (logistic_log_likelihood, (np.array([0.5, -0.4, 0.8]), FEATURES, LABELS)),
    (poisson_regression, (np.array([0.2, -0.1, 0.3]), FEATURES, COUNTS)),
    (dirichlet_posterior, (np.array([0.4, 0.9, -0.2]), np.array([0.2, 0.5, 0.3]))),
    (spectral_loss, (rng.standard_normal(16),)),
]
IDS = [f.__name__ for f, _ in CASES]


@pytest.mark.parametrize("function, args", CASES, ids=IDS)
def test_gradient_matches_central_differences(function, args):
    got = ssad.grad(function)(*args)
    expected = numerical_gradient(lambda p: function(p, *args[1:]), args[0])
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)
    _, tangent = ssad.jvp(function, args, (np.ones_like(args[0]),) + (None,) * (len(args) - 1))
    np.testing.assert_allclose(tangent, np.sum(got), rtol=1e-9, atol=1e-10)


# autograd has no `log_expit`: that model is checked against differences only
AGAINST_AUTOGRAD = [(f, args) for f, args in CASES if f is not logistic_log_likelihood]


@pytest.mark.parametrize("function, args", AGAINST_AUTOGRAD, ids=[f.__name__ for f, _ in AGAINST_AUTOGRAD])
def test_first_and_second_derivatives_match_autograd(function, args):
    verdicts = oracle.compare(function, args, positions=(0,), label=function.__name__)
    assert [v.status for v in verdicts] == ["agree"] * 3, "\n".join(f"{v.status} {v.check}: {v.detail}" for v in verdicts)


@pytest.mark.parametrize("function, args", CASES, ids=IDS)
def test_hessian_matches_differences_of_the_gradient(function, args):
    gradient = ssad.grad(function)
    hessian = ssad.hessian(function)(*args)
    columns = [numerical_gradient(lambda p, k=k: gradient(p, *args[1:])[k], args[0]) for k in range(args[0].size)]
    np.testing.assert_allclose(hessian, np.array(columns), rtol=1e-5, atol=1e-6)
