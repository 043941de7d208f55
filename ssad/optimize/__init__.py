"""Stage 7, optimize: rewrites that keep what code computes and make it read like a person's.

Assumes: gast statements in A-normal form (`cse`, right after the frontend) or the
statements of a transformation (`cleanup`, `broadcasts`).
Guarantees: `cse` merges repeated pure computations; `cleanup` removes dead code and
copies, folds constants and propagates zeros; `broadcasts` drops broadcasts that the
shapes make unnecessary. Purity is asked of the one effect model, `REGISTRY.is_pure`.
"""
