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


def test_mode_forward_prints_the_jvp(model):
    done = run("show", f"{model}:loss", "--mode", "forward")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("def jvp_loss_wrt_W(W, x, *, d_W):")
    assert "# tangent of: h = np.tanh(x @ W)" in done.stdout
    assert "d_x_matmul_W = x @ d_W" in done.stdout
    compile(done.stdout, "<cli>", "exec")


def test_mode_forward_with_wrt_and_no_optimize(model):
    done = run("show", f"{model}:loss", "--mode", "forward", "--wrt", "x", "--no-optimize")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("def jvp_loss_wrt_x(W, x, *, d_x):")
    assert "d_x_matmul_W = d_x @ W" in done.stdout


def test_mode_reverse_is_the_default(model):
    explicit = run("show", f"{model}:loss", "--mode", "reverse")
    assert explicit.returncode == 0, explicit.stderr
    assert explicit.stdout == run("show", f"{model}:loss").stdout


@pytest.mark.parametrize(
    "mode, stage, expected",
    [
        ("reverse", "parse", "h = np.tanh(x @ W)"),
        ("reverse", "activity", "# active:"),
        ("reverse", "fence", "h = np.tanh(x @ W)"),
        ("reverse", "jumps", "h = np.tanh(x @ W)"),
        ("reverse", "cse", "x_matmul_W = x @ W"),
        ("reverse", "reverse", "# grad of: h = np.tanh(x @ W)"),
        ("reverse", "tape", "# grad of: h = np.tanh(x @ W)"),
        ("reverse", "optimized", "def grad_loss(W, x):"),
        ("forward", "parse", "h = np.tanh(x @ W)"),
        ("forward", "anf", "x_matmul_W = x @ W"),
        ("forward", "activity", "# active:"),
        ("forward", "forward", "# tangent of: h = np.tanh(x @ W)"),
        ("forward", "optimized", "def jvp_loss_wrt_W(W, x, *, d_W):"),
    ],
)
def test_every_stage_in_both_modes(model, mode, stage, expected):
    done = run("show", f"{model}:loss", "--mode", mode, "--stage", stage)
    assert done.returncode == 0, done.stderr
    assert expected in done.stdout
    compile(done.stdout, "<cli>", "exec")


@pytest.mark.parametrize(
    "args, expected",
    [
        (("--mode", "forward", "--stage", "reverse"), "with --mode forward, use --stage forward"),
        (("--stage", "forward"), "with --mode reverse, use --stage reverse"),
        (("--stage", "optimized", "--no-optimize"), "contradict each other"),
        (("--mode", "forward", "--stage", "tape"), "has no tape stage"),
    ],
)
def test_unsupported_mode_and_stage_combinations_are_one_line_errors(model, args, expected):
    done = run("show", f"{model}:loss", *args)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("ssad: error: ")
    assert expected in done.stderr


def test_unknown_mode_is_a_usage_error(model):
    done = run("show", f"{model}:loss", "--mode", "sideways")
    assert done.returncode == 2
    assert "invalid choice: 'sideways'" in done.stderr


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
    import ssad

    done = run("--version")
    assert done.returncode == 0 and done.stdout == f"ssad {ssad.__version__}\n"
    done = run("show", "--help")
    assert done.returncode == 0 and "--wrt" in done.stdout and "examples:" in done.stdout
    for option in ("--mode {reverse,forward}", "--stage {parse,fence,jumps,anf,cse,activity,reverse,forward,tape,optimized}"):
        assert option in done.stdout
    assert "stages (--stage), in pipeline order:" in done.stdout


def test_top_level_help_shows_examples_of_every_option():
    done = run("--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: ssad ")
    examples = done.stdout.split("examples:", 1)[1]
    for option in ("--wrt W,b", "--mode forward", "--stage anf", "--no-color"):
        assert f"ssad show model.py:loss {option}" in examples


def test_no_arguments_prints_help():
    done = run()
    assert done.returncode == 2
    assert done.stdout.startswith("usage: ssad ") and "examples:" in done.stdout
    assert done.stderr == ""


def test_no_color_stays_plain_on_a_terminal(model):
    output, returncode = run_on_terminal("show", f"{model}:loss", "--no-color")
    assert returncode == 0
    assert b"\x1b[" not in output and b"def grad_loss(W, x):" in output


def test_no_color_environment_variable_stays_plain_on_a_terminal(model):
    output, returncode = run_on_terminal("show", f"{model}:loss", env={"NO_COLOR": "1"})
    assert returncode == 0
    assert b"\x1b[" not in output and b"def grad_loss(W, x):" in output


def test_console_script_is_installed(model):
    script = os.path.join(os.path.dirname(sys.executable), "ssad")
    assert os.path.exists(script)
    done = subprocess.run([script, "show", f"{model}:loss"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "def grad_loss" in done.stdout


def run_on_terminal(*args, env=None):
    """Run `python -m ssad *args` with stdout on a pseudo-terminal; return (output, returncode)."""
    import pty
    import select

    leader, follower = pty.openpty()
    environment = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    environment.update(env or {})
    process = subprocess.Popen(
        [sys.executable, "-m", "ssad", *args], stdout=follower, stderr=subprocess.PIPE, env=environment
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
    return output, process.returncode


def test_highlighted_on_a_terminal(model):
    output, returncode = run_on_terminal("show", f"{model}:loss")
    assert returncode == 0
    assert b"\x1b[" in output and b"grad_loss" in output


def test_forward_mode_highlighted_on_a_terminal(model):
    output, returncode = run_on_terminal("show", f"{model}:loss", "--mode", "forward")
    assert returncode == 0
    assert b"\x1b[" in output and b"jvp_loss_wrt_W" in output
