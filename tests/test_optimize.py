"""Golden tests of each optimizer pass on its own: statements in, exact source out.

The passes run on generated statements; here they run on small hand-written ones,
so each test shows exactly what its pass does and what it must leave alone.
"""

import textwrap

import gast
import numpy as np

from ssad import runtime
from ssad.frontend.builders import comment
from ssad.frontend.namespace import Namespace
from ssad.transform.fold import ZERO, fold, materialize_zeros
from ssad.frontend.naming import Namer
from ssad.optimize.cleanup import (
    _callee,
    drop_empty_comments,
    eliminate_dead_code,
    fold_broadcasts,
    optimize,
    propagate_copies,
)


def parse(source):
    return gast.parse(textwrap.dedent(source)).body


def unparse(statements):
    return gast.unparse(gast.Module(body=statements, type_ignores=[])).strip()


def namespace(**values):
    return Namespace(Namer(), {"np": np, **values})


def same(statements, expected):
    assert unparse(statements) == textwrap.dedent(expected).strip()


# ----- copy propagation -----


def test_copy_propagation_reads_the_source_until_either_is_reassigned():
    statements = parse(
        """
        d_a = d_b
        d_c = d_a * 2.0
        d_b = d_c + 1.0
        d_e = d_a * 3.0
        """
    )
    # d_a is read as d_b until d_b changes; after that d_a must be read as itself
    same(
        propagate_copies(statements, {"d_a"}),
        """
        d_a = d_b
        d_c = d_b * 2.0
        d_b = d_c + 1.0
        d_e = d_a * 3.0
        """,
    )


def test_copy_propagation_only_renames_candidates_and_keeps_returned_names():
    statements = parse(
        """
        d_x = d_y
        u = v
        w = u + d_x
        return d_x
        """
    )
    same(
        propagate_copies(statements, {"d_x"}),
        """
        d_x = d_y
        u = v
        w = u + d_y
        return d_x
        """,
    )


def test_copy_propagation_stops_at_control_flow():
    statements = parse(
        """
        d_x = d_y
        for i in range(3):
            d_y = d_y * 2.0
        d_z = d_x + 1.0
        """
    )
    same(
        propagate_copies(statements, {"d_x"}),
        """
        d_x = d_y
        for i in range(3):
            d_y = d_y * 2.0
        d_z = d_x + 1.0
        """,
    )


def test_an_array_written_in_place_keeps_its_own_name():
    # z and t are one array: reading t for z would be right here, but code that
    # differentiates this code again would see two names of an array written in place
    statements = parse(
        """
        z = t
        a = np.sum(z)
        z[0] = 1.0
        b = np.sum(z)
        d_b = d_a
        c = d_b * 2.0
        return (a, b, c)
        """
    )
    same(
        optimize(statements, namespace(), {"z", "d_b"}),
        """
        z = t
        a = np.sum(z)
        z[0] = 1.0
        b = np.sum(z)
        c = d_a * 2.0
        return (a, b, c)
        """,
    )


# ----- dead code elimination -----


def test_dead_pure_assignments_go_and_effects_stay():
    statements = parse(
        """
        a = np.sin(x)
        b = np.cos(x)
        print(b)
        c = a * 2.0
        y[0] = c
        unused = np.exp(c)
        return c
        """
    )
    kept, live = eliminate_dead_code(statements, namespace(), set())
    same(
        kept,
        """
        a = np.sin(x)
        b = np.cos(x)
        print(b)
        c = a * 2.0
        y[0] = c
        return c
        """,
    )
    assert live == {"np", "print", "x", "y"}  # what the kept code reads (globals too)


def test_dead_code_liveness_goes_around_loops_and_through_branches():
    statements = parse(
        """
        s = 0.0
        t = np.sin(x)
        for i in range(n):
            s = s + t
            dead = s * 2.0
        if s > 0.0:
            r = s
        else:
            r = -s
            gone = np.cos(r)
        return r
        """
    )
    kept, _ = eliminate_dead_code(statements, namespace(), set())
    same(
        kept,
        """
        s = 0.0
        t = np.sin(x)
        for i in range(n):
            s = s + t
        if s > 0.0:
            r = s
        else:
            r = -s
        return r
        """,
    )


def test_dead_code_keeps_tape_pops_and_drops_unread_runtime_helpers():
    statements = parse(
        """
        d_a = unbroadcast(d_b, a)
        h = tape.pop()
        return d_b
        """
    )
    kept, _ = eliminate_dead_code(statements, namespace(unbroadcast=runtime.unbroadcast), set())
    same(
        kept,
        """
        h = tape.pop()
        return d_b
        """,
    )


# ----- broadcast folding -----


def test_a_broadcast_read_only_against_its_shape_source_is_folded():
    statements = parse(
        """
        d_e = np.broadcast_to(d_s / s, np.shape(e))
        d_x = d_x + d_e * e
        d_y = e - d_e
        """
    )
    same(
        fold_broadcasts(statements, namespace(), _callee),
        """
        d_e = d_s / s
        d_x = d_x + d_e * e
        d_y = e - d_e
        """,
    )


def test_a_broadcast_folds_through_arrays_known_to_share_its_shape():
    statements = parse(
        """
        s = x ** 2
        t = np.tanh(-s) * 3.0
        d_s = np.broadcast_to(d_total, np.shape(s))
        d_x = d_s * 2 * x
        d_t = np.broadcast_to(d_total, np.shape(t))
        d_z = d_z + -d_t * (1 - x * x)
        """
    )
    same(
        fold_broadcasts(statements, namespace(), _callee),
        """
        s = x ** 2
        t = np.tanh(-s) * 3.0
        d_s = d_total
        d_x = d_s * 2 * x
        d_t = d_total
        d_z = d_z + -d_t * (1 - x * x)
        """,
    )


def test_shapes_are_not_assumed_equal_across_broadcasting_or_rebinding():
    kept = [
        # x * y has the shape of neither x nor y in general
        "p = x * y\nd_p = np.broadcast_to(v, np.shape(p))\nd_x = d_p * y",
        # a matrix product is not elementwise, so q says nothing about x
        "q = x @ a\nd_q = np.broadcast_to(v, np.shape(q))\nd_x = d_q * x",
        # s is assigned twice: which assignment's shape it has depends on where it is read
        "s = x ** 2\ns = s[0]\nd_s = np.broadcast_to(v, np.shape(s))\nd_x = d_s * x",
        # assigned in a loop, s may differ in shape from one pass to the next
        "for i in r:\n    s = x[i:] ** 2\nd_s = np.broadcast_to(v, np.shape(s))\nd_x = d_s * x",
        # the broadcast alone decides the shape of the expression
        "s = x ** 2\nd_s = np.broadcast_to(v, np.shape(s))\nd_x = d_s * 2.0",
    ]
    for source in kept:
        statements = parse(source)
        before = unparse(statements)
        assert unparse(fold_broadcasts(statements, namespace(), _callee)) == before, source


def test_a_broadcast_read_any_other_way_stays():
    kept = [
        # read against another array: the result could have that array's shape
        "d_e = np.broadcast_to(v, np.shape(e))\nd_x = d_e * other",
        # read on its own: the caller sees the full shape
        "d_e = np.broadcast_to(v, np.shape(e))\nd_x = np.sum(d_e, axis=0)",
        "d_e = np.broadcast_to(v, np.shape(e))\nreturn d_e",
        # the shape source is rebound, so `e` may not be the array whose shape was taken
        "d_e = np.broadcast_to(v, np.shape(e))\ne = e[0]\nd_x = d_e * e",
        # the broadcast name is assigned twice (in a loop, say)
        "d_e = np.broadcast_to(v, np.shape(e))\nd_x = d_e * e\nd_e = np.broadcast_to(w, np.shape(e))\nd_y = d_e * e",
        # in a loop, a read before the broadcast pairs last iteration's value with this one's `e`
        "for i in r:\n    d_x = d_e * e\n    e = f(i)\n    d_e = np.broadcast_to(v, np.shape(e))",
        # a matrix product is not elementwise
        "d_e = np.broadcast_to(v, np.shape(e))\nd_x = d_e @ e",
    ]
    for source in kept:
        statements = parse(source)
        before = unparse(statements)
        assert unparse(fold_broadcasts(statements, namespace(), _callee)) == before, source


# ----- comments -----


def test_a_comment_left_without_code_is_dropped():
    statements = [comment("grad of: a = b"), *parse("d_b = d_a"), comment("grad of: c = d"), *parse("return d_b")]
    out = drop_empty_comments(statements)
    assert len(out) == 3
    assert unparse(out[1:]) == "d_b = d_a\nreturn d_b"


# ----- constant folding and symbolic zeros -----


def test_folding_applies_identities_and_literal_arithmetic():
    (statement,) = parse("y = (x * 1) + 0 + 2.0 * 3.0 - z ** 1 / 1")
    same([fold(statement)], "y = x + 6.0 - z")


def test_zero_tangents_fold_away_or_become_literal_zeros():
    (statement,) = parse(f"t = {ZERO} * np.cos(x) + d_y * 2.0")
    same([fold(statement)], "t = d_y * 2.0")
    (statement,) = parse(f"t = f({ZERO})")
    same([materialize_zeros(fold(statement))], "t = f(0.0)")


def test_the_passes_together_on_an_adjoint_fragment():
    statements = parse(
        """
        d_h = d_out
        d_unused = np.exp(d_h)
        d_x = d_h * np.cos(x)
        return d_x
        """
    )
    same(
        optimize(statements, namespace(), copies_of={"d_h"}),
        """
        d_x = d_out * np.cos(x)
        return d_x
        """,
    )


# ----- release of dead values (forward-mode code) -----


def test_values_are_released_after_their_last_read():
    from ssad.optimize.release import release_dead_values

    statements = parse(
        """
        a = x * 2.0
        n = x.shape
        b = np.sin(a)
        if s > 0.0:
            c = b * a
        else:
            c = b
        d = c + 1.0
        e = d * n[0]
        return e
        """
    )
    # a is read in the branch, so it lives through it; c is bound on both paths but
    # only inside the branch, so it is never deleted; n is a shape, x a parameter;
    # d dies where e is made, which the function returns next
    same(
        release_dead_values(statements, ["x", "s"]),
        """
        a = x * 2.0
        n = x.shape
        b = np.sin(a)
        if s > 0.0:
            c = b * a
        else:
            c = b
        del a, b
        d = c + 1.0
        e = d * n[0]
        return e
        """,
    )


def test_nothing_is_released_where_a_nested_function_may_read_it():
    from ssad.optimize.release import release_dead_values

    source = """
        a = x * 2.0
        f = lambda t: t * a
        b = f(x)
        return b
        """
    same(release_dead_values(parse(source), ["x"]), source)
