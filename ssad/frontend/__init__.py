"""Stages 1-3, the frontend: from a Python function to a Program in A-normal form.

    parse -> fence -> jumps -> anf (naming, closures, sharing; validate checks the result)

Assumes: a Python function whose source can be read (a file, a Jupyter cell, or
source registered in linecache).
Guarantees: every free name resolved to the live object it names (`parse`); what is
not supported refused early with file, line and column (`fence`); `return`,
`break` and `continue` lowered to flags (`jumps`); one operation per statement on
names and constants, temporaries named after what they hold (`anf`), with each
call classified as a primitive, a user function, a container operation, ...
(`primitives`). `builders` holds the gast builders every later stage uses.
"""
