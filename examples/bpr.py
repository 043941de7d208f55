"""Bayesian personalised ranking (BPR) by matrix factorization, with gradients from ssad.

The data are synthetic but shaped like MovieLens-100K: 943 users, 1682 items and
100,000 implicit-feedback interactions, drawn from a hidden low-rank taste model
with a long tail of item popularity. One interaction per user is held out.

Training is minibatch SGD on (user, positive item, negative item) triples: the
negative is an item the user has not interacted with, drawn at random each epoch.
The BPR loss and its gradient with respect to both factor matrices come from
`ssad.value_and_grad`. The loss reads the factor matrices only by row gathers
(`U[users]`, `V[positives]`), so with `sparse=True` their gradients are
`ssad.RowGradient`s holding the rows a minibatch touched, and each SGD step updates
only those rows (`d_V.apply_to(V, scale=-rate)`). Each epoch prints its time, its mean
training loss, and the AUC on held-out pairs: how often a user's held-out item
outranks an item that user never touched (0.5 is chance).

Run with `python examples/bpr.py` (ssad installed, e.g. `pip install -e .`);
`--dense` takes dense gradients and updates whole matrices instead, `--compare` trains
both ways from the same start and prints their epoch times and AUCs side by side, and
`--compile` compiles the gradient with Numba (`pip install -e '.[numba]'`).
"""

import time

import numpy as np

import ssad


def bpr_loss(U, V, users, positives, negatives, regularization):
    """Sum over the triples of -log sigmoid(score of positive - score of negative), plus L2."""
    u = U[users]
    v_pos = V[positives]
    v_neg = V[negatives]
    margin = np.sum(u * (v_pos - v_neg), axis=1)
    fit = np.sum(np.logaddexp(0.0, -margin))  # -log sigmoid(margin), without overflow
    penalty = np.sum(u * u) + np.sum(v_pos * v_pos) + np.sum(v_neg * v_neg)
    return fit + regularization * penalty


def make_interactions(users, items, interactions, rng, rank=8):
    """`interactions` distinct (user, item) pairs from a low-rank model with popular items."""
    taste = rng.standard_normal((users, rank))
    traits = rng.standard_normal((items, rank))
    popularity = 1.5 * np.log(1.0 + rng.pareto(1.0, items))
    # Every user has at least 20 interactions (as in MovieLens) and at most half the items.
    activity = rng.lognormal(0.0, 1.0, users)
    per_user = 20 + rng.multinomial(interactions - 20 * users, activity / activity.sum())
    cap = items // 2
    while per_user.max() > cap:  # hand what the heaviest users cannot take to the others
        overflow = np.sum(np.maximum(per_user - cap, 0))
        per_user = np.minimum(per_user, cap)
        room = (per_user < cap) * activity
        per_user += rng.multinomial(overflow, room / room.sum())
    rows, cols = [], []
    for user in range(users):
        scores = taste[user] @ traits.T / np.sqrt(rank) + popularity
        weights = np.exp(scores - scores.max())
        chosen = rng.choice(items, size=per_user[user], replace=False, p=weights / weights.sum())
        rows.append(np.full(per_user[user], user))
        cols.append(chosen)
    return np.concatenate(rows), np.concatenate(cols)


def sample_negatives(users, seen, rng):
    """One item per user in `users` that the user has not interacted with."""
    items = seen.shape[1]
    negatives = rng.integers(0, items, len(users))
    clash = seen[users, negatives]
    while clash.any():
        negatives[clash] = rng.integers(0, items, int(clash.sum()))
        clash = seen[users, negatives]
    return negatives


def auc(U, V, users, held_out, negatives):
    """Fraction of held-out pairs where the held-out item outscores the sampled negative."""
    positive_scores = np.sum(U[users] * V[held_out], axis=1)
    negative_scores = np.sum(U[users] * V[negatives], axis=1)
    return float(np.mean(positive_scores > negative_scores) + 0.5 * np.mean(positive_scores == negative_scores))


def main(
    users=943,
    items=1682,
    interactions=100_000,
    factors=32,
    epochs=10,
    batch=512,
    learning_rate=0.05,
    regularization=0.005,
    seed=0,
    compile=False,
    sparse=True,
):
    """Train BPR; return the per-epoch losses, AUCs and times (seconds)."""
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    user_ids, item_ids = make_interactions(users, items, interactions, rng)
    seen = np.zeros((users, items), dtype=bool)
    seen[user_ids, item_ids] = True

    # Hold out one interaction per user; train on the rest.
    first = np.unique(user_ids, return_index=True)[1]
    held_out_index = first + (rng.random(len(first)) * np.bincount(user_ids)).astype(int)
    held_users, held_items = user_ids[held_out_index], item_ids[held_out_index]
    training = np.ones(len(user_ids), dtype=bool)
    training[held_out_index] = False
    train_users, train_items = user_ids[training], item_ids[training]
    evaluation_negatives = sample_negatives(np.repeat(held_users, 10), seen, rng)
    evaluation_users, evaluation_items = np.repeat(held_users, 10), np.repeat(held_items, 10)
    print(
        f"{users} users, {items} items, {len(user_ids)} interactions "
        f"({len(train_users)} for training, {len(held_users)} held out); "
        f"data made in {time.perf_counter() - start:.1f} s"
    )

    U = 0.1 * rng.standard_normal((users, factors))
    V = 0.1 * rng.standard_normal((items, factors))
    step = ssad.value_and_grad(bpr_loss, wrt=("U", "V"), compile=compile, sparse=sparse)
    history = {"loss": [], "auc": [auc(U, V, evaluation_users, evaluation_items, evaluation_negatives)], "seconds": []}
    print(f"before training: held-out AUC {history['auc'][0]:.4f}")
    for epoch in range(1, epochs + 1):
        start = time.perf_counter()
        order = rng.permutation(len(train_users))
        negatives = sample_negatives(train_users[order], seen, rng)
        total = 0.0
        for begin in range(0, len(order), batch):
            rows = order[begin : begin + batch]
            triple = (train_users[rows], train_items[rows], negatives[begin : begin + batch])
            value, (d_U, d_V) = step(U, V, *triple, regularization)
            total += value
            if sparse:  # RowGradients: only the rows this batch read move
                d_U.apply_to(U, scale=-learning_rate)
                d_V.apply_to(V, scale=-learning_rate)
            else:
                U -= learning_rate * d_U
                V -= learning_rate * d_V
        elapsed = time.perf_counter() - start
        history["seconds"].append(elapsed)
        history["loss"].append(total / len(order))
        history["auc"].append(auc(U, V, evaluation_users, evaluation_items, evaluation_negatives))
        print(
            f"epoch {epoch:2d}: {elapsed:.2f} s, training loss {history['loss'][-1]:.4f}, "
            f"held-out AUC {history['auc'][-1]:.4f}"
        )
    return history


def compare(**settings):
    """Train with dense and with sparse gradients from the same start; print both side by side."""
    runs = {"dense": main(**settings, sparse=False), "sparse": main(**settings, sparse=True)}
    print("\nepoch   dense: seconds   AUC      sparse: seconds   AUC")
    dense, sparse = runs["dense"], runs["sparse"]
    for epoch in range(len(dense["seconds"])):
        print(f"{epoch + 1:5d}   {dense['seconds'][epoch]:14.3f}   {dense['auc'][epoch + 1]:.4f}"
              f"   {sparse['seconds'][epoch]:15.3f}   {sparse['auc'][epoch + 1]:.4f}")
    print(f"median  {np.median(dense['seconds']):14.3f}            {np.median(sparse['seconds']):15.3f}")
    return runs


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="BPR matrix factorization trained with ssad's gradients")
    parser.add_argument("--dense", action="store_true", help="dense gradients, whole matrices updated")
    parser.add_argument("--compare", action="store_true", help="train dense and sparse, print both")
    parser.add_argument("--compile", action="store_true", help="compile the gradient with Numba")
    parser.add_argument("--items", type=int, default=1682, help="items in the catalogue (MovieLens-100K: 1682)")
    parser.add_argument("--epochs", type=int, default=10)
    options = parser.parse_args()
    settings = dict(items=options.items, epochs=options.epochs, compile=options.compile)
    if options.compare:
        compare(**settings)
    else:
        main(**settings, sparse=not options.dense)
