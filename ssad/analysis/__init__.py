"""Stage 4, analysis: facts about a Program in A-normal form.

Assumes: a Program from the frontend (and `optimize.cse`).
Guarantees: `activity` — which values depend on the parameters differentiated and
reach the result (only they get derivative code); `invariance` — which values a loop
leaves unchanged, so the tape need not record them; `shapes` — which names hold
scalars, so broadcasting adjoints need no `unbroadcast`; `kinds` — which names hold
objects of the user's. Only two passes rewrite, once the kinds are known: `protocols`
makes the methods Python's protocols call on objects explicit (`for v in p` walks
`p.__iter__()`), and `kinds.guard` adds the checks whose answer only the running code
knows.
"""
