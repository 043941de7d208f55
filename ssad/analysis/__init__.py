"""Stage 4, analysis: facts about a Program in A-normal form, computed, never rewritten.

Assumes: a Program from the frontend (and `optimize.cse`).
Guarantees: `activity` — which values depend on the parameters differentiated and
reach the result (only they get derivative code); `invariance` — which values a loop
leaves unchanged, so the tape need not record them; `shapes` — which names hold
scalars, so broadcasting adjoints need no `unbroadcast`.
"""
