"""Stages 8-9, the backend: assembling, emitting, compiling and caching generated code.

Assumes: the stages below it, and nothing of the public API.
Guarantees: `pipeline.build` composes the stages in order; `assemble` turns a
transformation into `grad_f`, `forward_f`/`backward_f` or `jvp_f` with `f`'s
signature; `emit` prints gast as Python source, registered in linecache under
`<ssad NAME>`, and executes it; `driver.compiled` caches the result per function,
wrt, variant, options and rule-registry version, and installs itself as the
resolver of `runtime.handles`.
"""
