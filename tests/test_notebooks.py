"""Notebooks: the examples run in a real Jupyter kernel, and `show` renders as HTML.

Each `examples/*.ipynb` is executed top to bottom by nbclient in an IPython kernel of
the interpreter running the tests (a kernelspec written to a temporary directory
points at `sys.executable`, so no kernel has to be installed and no other Python is
picked up). A notebook written here checks that functions defined in cells work with
every entry point and that errors name the cell. `Shown._repr_html_` is tested
directly, without a kernel.
"""

import html
import json
import os
import pathlib
import re
import sys
import types

import numpy as np
import pytest

import ssad

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
NOTEBOOKS = sorted(path.stem for path in EXAMPLES.glob("*.ipynb"))
KERNEL_NAME = "ssad-test-python"
CELL_TIMEOUT = 60  # seconds


# ----- running notebooks -----


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    """A kernelspec for this interpreter, in a directory of its own, and a scratch directory."""
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    from jupyter_client.kernelspec import KernelSpecManager

    home = tmp_path_factory.mktemp("jupyter")
    spec_dir = home / "kernels" / KERNEL_NAME
    spec_dir.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "ssad tests",
        "language": "python",
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    return KernelSpecManager(kernel_dirs=[str(home / "kernels")]), home


def execute(notebook, kernels, name):
    """Run every cell of `notebook` in a fresh kernel; raise CellExecutionError on the first error."""
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    spec_manager, home = kernels
    manager = KernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=spec_manager)
    manager.connection_file = str(home / f"kernel-{name}.json")
    env = dict(os.environ)
    # This checkout's ssad, whatever is installed; and no user profile or startup files.
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    env["IPYTHONDIR"] = str(home / "ipython")
    env.pop("MPLBACKEND", None)
    manager.start_kernel(cwd=str(EXAMPLES), env=env)
    try:
        client = NotebookClient(
            notebook, km=manager, timeout=CELL_TIMEOUT, allow_errors=False, shutdown_kernel="immediate"
        )
        client.execute(cleanup_kc=True)  # stops the client's channels and the kernel
    finally:
        if manager.has_kernel:  # the run failed before nbclient could clean up
            manager.shutdown_kernel(now=True)
    return notebook


@pytest.fixture(scope="module")
def executed(kernels):
    """`executed(stem)`: examples/<stem>.ipynb after a run (each notebook runs once)."""
    import nbformat

    runs = {}

    def run(stem):
        if stem not in runs:
            notebook = nbformat.read(EXAMPLES / f"{stem}.ipynb", as_version=4)
            runs[stem] = execute(notebook, kernels, stem)
        return runs[stem]

    return run


def outputs(notebook):
    """(printed text, list of HTML outputs) of a notebook after a run."""
    text, htmls = [], []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.output_type == "stream":
                text.append(output.text)
            elif output.output_type in ("execute_result", "display_data"):
                text.append(output.data.get("text/plain", ""))
                if "text/html" in output.data:
                    htmls.append(output.data["text/html"])
    return "".join(text), htmls


def code_cell(source):
    import nbformat

    return nbformat.v4.new_code_cell(source)


# ----- the example notebooks -----


def test_every_example_notebook_is_found():
    assert set(NOTEBOOKS) >= {"quickstart", "control_flow_and_tape", "custom_rules", "training_a_small_model"}


@pytest.mark.parametrize("stem", NOTEBOOKS)
def test_example_notebook_is_committed_without_outputs(stem):
    notebook = json.loads((EXAMPLES / f"{stem}.ipynb").read_text())
    assert notebook["nbformat"] == 4
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None, f"{stem}.ipynb holds outputs"


@pytest.mark.parametrize("stem", NOTEBOOKS)
def test_example_notebook_runs_without_error(stem, executed):
    notebook = executed(stem)
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            assert output.output_type != "error", f"{stem}.ipynb: {output.ename}: {output.evalue}"


def test_quickstart_shows_checks_and_reports_errors(executed):
    text, htmls = outputs(executed("quickstart"))
    visible = [_text_of(h) for h in htmls]
    assert any("grad of loss with respect to W, b" in v and "# grad of: h = np.tanh(x @ W + b)" in v for v in visible)
    assert any("jvp of loss" in v and "# tangent of:" in v for v in visible)
    assert "check_grads passed" in text
    assert "def grad_loss(W, b, x, y):" in text  # print() gives the plain source
    # The error names the cell, the line and the construct.
    assert re.search(r"Cell In\[\d+\], line 2, column 5: `try` statements are not supported", text), text


def test_control_flow_notebook_records_what_it_says(executed):
    text, htmls = outputs(executed("control_flow_and_tape"))
    assert "tape: []" in text
    assert "20 values recorded for 20 steps" in text
    assert "check_grads passed for all five functions" in text
    assert any("tape.push(y)" in _text_of(h) for h in htmls)


def test_custom_rules_notebook_uses_the_rule(executed):
    text, htmls = outputs(executed("custom_rules"))
    assert "check_rule and check_tangent passed" in text
    assert "same gradient as the unrolled Newton steps: True" in text
    assert "check_grads passed" in text
    after_rule = [h for h in htmls if "grad of loss" in h]
    assert after_rule and "tape" not in after_rule[0]
    assert "3.0 * solve_cubic_a ** 2 + 1.0" in _text_of(after_rule[0])


def test_training_notebook_loss_falls(executed):
    text, _ = outputs(executed("training_a_small_model"))
    match = re.search(r"loss fell from ([\d.]+) to ([\d.]+)", text)
    assert match, text
    first, last = map(float, match.groups())
    assert last < 0.5 * first


# ----- functions defined in cells -----

CELLS = [
    "import numpy as np\nimport ssad",
    "def inner(x):\n    return np.sin(x) * x",
    "def outer(x, y):\n    total = np.sum(inner(x) * y)\n    return total + helper(x)",
    "def helper(x):\n    return np.sum(x ** 3)",
    "x = np.array([0.3, -1.2, 2.0])\ny = np.array([1.0, 2.0, -0.5])\n"
    "expected = (np.cos(x) * x + np.sin(x)) * y + 3 * x ** 2\n"
    "assert np.allclose(ssad.grad(outer)(x, y), expected)\nprint('grad ok')",
    "value, tangent = ssad.jvp(outer, (x, y), (np.ones(3), None))\n"
    "assert np.isclose(tangent, np.sum(expected))\nprint('jvp ok')",
    "value, pullback = ssad.vjp(outer, x, y)\nassert np.allclose(pullback(1.0)[0], expected)\nprint('vjp ok')",
    "ssad.check_grads(outer, (x, y), order=2)\nassert np.allclose(np.diag(ssad.hessian(helper)(x)), 6 * x)\n"
    "print('second order ok')",
    "shown = ssad.show(outer)\nshown",
    "print(shown.original)",
    "def bad(x):\n    global counter\n    return x",
    "try:\n    ssad.grad(bad)\nexcept ssad.UnsupportedSyntaxError as error:\n    print('rejected:', error)\n"
    "    print('attributes:', error.lineno, error.text.strip())",
    "import math\ndef uses_gamma(x):\n    return np.sum(x * math.gamma(x[0]))",
    "try:\n    ssad.grad(uses_gamma)(x + 2.0)\nexcept ssad.MissingRuleError as error:\n    print('missing:', error)",
    "def inner(x):\n    return np.cos(x)",  # redefined: the new definition is the one differentiated
    "assert np.allclose(ssad.grad(lambda x: np.sum(inner(x)))(x), -np.sin(x))\nprint('redefined ok')",
]


def test_functions_defined_in_cells_work_everywhere(kernels):
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [code_cell(source) for source in CELLS]
    text, htmls = outputs(execute(notebook, kernels, "cells"))
    for check in ("grad ok", "jvp ok", "vjp ok", "second order ok", "redefined ok"):
        assert check in text
    (shown,) = [h for h in htmls if "grad of outer" in h]
    assert "# grad of: total = np.sum(inner(x) * y)" in _text_of(shown)
    assert "# inner, differentiated with respect to x" in _text_of(shown)
    assert re.search(r"Cell In\[\d+\]", shown)  # the originals are labelled with their cells
    assert "def outer(x, y):" in text
    # Errors name the cell as IPython does, the line within it, and its text.
    assert re.search(r"rejected: Cell In\[11\], line 2, column 5: `global` is not supported", text), text
    assert "attributes: 2 global counter" in text
    assert re.search(r"missing: Cell In\[13\], line 3, column \d+: no adjoint rule for \S*gamma", text), text


# ----- the HTML of show, without a kernel -----


def compare(x, limit):
    """Scale `x` <down> when it is above `limit` & not 0."""
    if np.sum(x) < limit:
        y = x * 2.0
    else:
        y = x / 2.0
    return np.sum(np.sin(y))


def caller(x):
    return compare(x, 1.0) * np.sum(x)


def _text_of(markup):
    """The visible text of an HTML fragment, one row per line."""
    rows = re.sub(r"</div>", "\n", markup)
    return html.unescape(re.sub(r"<[^>]+>", "", rows))


def test_repr_html_shows_original_and_generated_source():
    shown = ssad.show(compare)
    markup = shown._repr_html_()
    visible = _text_of(markup)
    for line in shown.source.splitlines():
        assert line.strip() in visible
    for line in shown.original.splitlines():
        assert line.strip() in visible
    assert "grad of compare with respect to x" in visible
    assert str(shown) == shown.source and repr(shown) == shown.source


def test_repr_html_escapes_the_source():
    markup = ssad.show(compare)._repr_html_()
    assert "&lt;" in markup and "&amp;" in markup
    assert "<down>" not in markup and "< limit" not in markup
    # Self-contained: inline styles only, nothing that needs a stylesheet or a script.
    assert "<script" not in markup and "<style" not in markup and "class=" not in markup
    assert markup.count("<div") == markup.count("</div>")


def test_repr_html_ties_each_comment_to_its_line():
    shown = ssad.show(compare)
    markup = shown._repr_html_()
    first = compare.__code__.co_firstlineno
    lines = shown.original.splitlines()
    assignment = first + next(i for i, line in enumerate(lines) if "y = x * 2.0" in line)
    comment = "# grad of: y = x * 2.0"
    assert comment in shown.source
    row = next(r for r in markup.split("</div>") if html.escape(comment, quote=False) in r)
    assert f"&larr; line {assignment}" in row
    assert "background" in row  # the comment row is set apart


def test_repr_html_of_callees_forward_mode_and_stages():
    shown = ssad.show(caller)
    assert [o.name for o in shown.originals] == ["caller", "compare"]
    visible = _text_of(shown._repr_html_())
    assert "def compare(x, limit):" in visible and "def backward_compare" in visible
    forward = ssad.show(caller, mode="forward")
    assert "# tangent of:" in forward.source and "jvp of caller" in forward._repr_html_()
    staged = ssad.show(compare, stage="anf")
    assert "after the anf stage" in staged._repr_html_()
    # The gradient of a gradient: the original is the generated code it differentiates.
    twice = ssad.show(ssad.grad(compare))
    assert twice.original.startswith("def grad_compare(")
    assert "def grad_grad_compare(" in _text_of(twice._repr_html_())


def test_errors_name_ipython_cells(monkeypatch):
    cell_file = "/tmp/ipykernel_0/123.py"
    shell = types.SimpleNamespace(compile=types.SimpleNamespace(_filename_map={cell_file: 7}))
    fake = types.ModuleType("IPython")
    fake.get_ipython = lambda: shell
    monkeypatch.setitem(sys.modules, "IPython", fake)
    error = ssad.UnsupportedSyntaxError("`global` is not supported", cell_file, 2, 4, "    global n")
    assert str(error).startswith("Cell In[7], line 2, column 5: `global` is not supported")
    assert error.filename == cell_file  # IPython renders the cell from the real filename
    other = ssad.UnsupportedSyntaxError("message", "model.py", 3, 0, "x")
    assert str(other).startswith("model.py:3:1: message")
