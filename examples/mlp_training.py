"""Train a two-layer tanh network by minibatch SGD, with gradients from ssad.

The task is synthetic: points on three interleaved spirals in the plane, one class
per spiral, which no linear classifier separates. The parameters live in a dict;
`ssad.value_and_grad` returns the loss and a dict of gradients with the same keys,
so an SGD step is one line per parameter. The script prints the loss as it falls
and the accuracy on held-out points at the end.

Run with `python examples/mlp_training.py` (ssad installed, e.g. `pip install -e .`).
"""

import time

import numpy as np

import ssad


def make_spirals(points_per_class, classes, rng, noise=0.2):
    """`classes` spiral arms of `points_per_class` noisy points each, and their labels."""
    radius = np.linspace(0.05, 1.0, points_per_class)
    xs, labels = [], []
    for c in range(classes):
        angle = np.linspace(0.0, 4.0, points_per_class) + 2.0 * np.pi * c / classes
        angle = angle + noise * rng.standard_normal(points_per_class)
        xs.append(np.column_stack([radius * np.sin(angle), radius * np.cos(angle)]))
        labels.append(np.full(points_per_class, c))
    return np.concatenate(xs), np.concatenate(labels)


def init_params(features, hidden, classes, rng):
    return {
        "W1": rng.standard_normal((features, hidden)) / np.sqrt(features),
        "b1": np.zeros(hidden),
        "W2": rng.standard_normal((hidden, classes)) / np.sqrt(hidden),
        "b2": np.zeros(classes),
    }


def predict(params, x):
    """Class scores (logits) of a tanh hidden layer followed by a linear layer."""
    h = np.tanh(x @ params["W1"] + params["b1"])
    return h @ params["W2"] + params["b2"]


def loss(params, x, labels):
    """Mean softmax cross-entropy of the network's logits against integer labels."""
    logits = predict(params, x)
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(log_probs[np.arange(x.shape[0]), labels])


def accuracy(params, x, labels):
    return float(np.mean(np.argmax(predict(params, x), axis=1) == labels))


def main(points_per_class=300, hidden=64, steps=3000, batch=64, learning_rate=0.5, report_every=250, seed=0):
    """Train on spirals; return a dict of the losses seen and the final accuracies."""
    rng = np.random.default_rng(seed)
    classes = 3
    x, labels = make_spirals(points_per_class, classes, rng)
    order = rng.permutation(len(x))
    split = int(0.8 * len(x))
    train, test = order[:split], order[split:]
    params = init_params(x.shape[1], hidden, classes, rng)

    step = ssad.value_and_grad(loss)  # gradient with respect to `params`, a dict like it
    print(f"{len(train)} training points, {len(test)} held out, {classes} classes, {hidden} hidden units")
    history = []
    start = time.perf_counter()
    for iteration in range(steps + 1):
        chosen = rng.choice(train, size=batch, replace=False)
        value, d_params = step(params, x[chosen], labels[chosen])
        if iteration % report_every == 0:
            full = loss(params, x[train], labels[train])
            history.append(full)
            print(f"step {iteration:5d}: training loss {full:.4f}")
        if iteration < steps:
            params = {name: params[name] - learning_rate * d_params[name] for name in params}
    elapsed = time.perf_counter() - start

    train_accuracy = accuracy(params, x[train], labels[train])
    test_accuracy = accuracy(params, x[test], labels[test])
    print(f"{steps} SGD steps in {elapsed:.2f} s ({1e6 * elapsed / max(steps, 1):.0f} us per step)")
    print(f"accuracy: {train_accuracy:.3f} on training points, {test_accuracy:.3f} held out (chance {1 / classes:.3f})")
    return {"losses": history, "train_accuracy": train_accuracy, "test_accuracy": test_accuracy, "params": params}


if __name__ == "__main__":
    main()
