"""The `ssad` command, run as a user would: in a subprocess."""

import os
import subprocess
import sys
import textwrap

import pytest

MODEL = textwrap.dedent(
    """\
    import numpy as np

    def loss(W, x):
        h = np.tanh(x @ W)
        return np.sum(h ** 2)

    def broken(x):
        try:
            x = x * 2
        except ValueError:
            pass
        return x
    """
)


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    return path


def run(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "ssad", *args], capture_output=True, text=True, cwd=cwd, timeout=120
    )


def test_show_file_function_prints_source_that_compiles(model):
    done = run("show", f"{model}:loss")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("def grad_loss(W, x):")
    assert "# grad of: h = np.tanh(x @ W)" in done.stdout
    assert "\x1b[" not in done.stdout  # plain on a pipe
    compile(done.stdout, "<cli>", "exec")


def test_show_with_wrt_names_and_no_optimize(model):
    done = run("show", f"{model}:loss", "--wrt", "W,x", "--no-optimize")
    assert done.returncode == 0, done.stderr
    assert "return d_W, d_x" in done.stdout


def test_show_module_function(model):
    done = run("show", "model:loss", "--wrt", "1", cwd=model.parent)
    assert done.returncode == 0, done.stderr
    assert "return d_x" in done.stdout


def test_stage_option(model):
    done = run("show", f"{model}:loss", "--stage", "anf")
    assert done.returncode == 0, done.stderr
    assert "x_matmul_W = x @ W" in done.stdout and "d_" not in done.stdout


@pytest.mark.parametrize(
    "args, expected",
    [
        (("show", "does_not_exist.py:f"), "no such file"),
        (("show", "{model}:nope"), "has no function 'nope'"),
        (("show", "{model}:broken"), "model.py:8:5: `try` statements are not supported"),
        (("show", "{model}"), "expected FILE.py:FUNCTION"),
        (("show", "no_such_module_xyz:f"), "cannot import module"),
        (("show", "{model}:loss", "--wrt", "q"), "not a parameter"),
    ],
)
def test_errors_are_one_line_without_traceback(model, args, expected):
    done = run(*[a.format(model=model) for a in args])
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("ssad: error: ")
    assert expected in lines[0]
    assert "Traceback" not in done.stderr


def test_version_and_help():
    done = run("--version")
    assert done.returncode == 0 and done.stdout.startswith("ssad ")
    done = run("show", "--help")
    assert done.returncode == 0 and "--wrt" in done.stdout and "examples:" in done.stdout


def test_console_script_is_installed(model):
    script = os.path.join(os.path.dirname(sys.executable), "ssad")
    assert os.path.exists(script)
    done = subprocess.run([script, "show", f"{model}:loss"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "def grad_loss" in done.stdout


def test_highlighted_on_a_terminal(model):
    import pty
    import select

    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "ssad", "show", f"{model}:loss"],
        stdout=follower,
        stderr=subprocess.PIPE,
        env={k: v for k, v in os.environ.items() if k != "NO_COLOR"},
    )
    os.close(follower)
    output = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 30)
        if not ready:
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
    process.wait(timeout=60)
    os.close(leader)
    assert process.returncode == 0
    assert b"\x1b[" in output and b"grad_loss" in output
