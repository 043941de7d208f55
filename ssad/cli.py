"""The `ssad` command line: `ssad show FILE.py:FUNC` prints a generated gradient.

`--mode forward` prints the generated jvp instead, and `--stage` the code after one
pipeline stage. On a terminal the source is highlighted; on a pipe it is plain
source that compiles. Errors are one line (`ssad: error: ...`) and exit with
status 1; `ssad` with no command prints the help and exits with status 2.
"""

import argparse
import importlib
import importlib.util
import os
import sys

from . import __version__
from .backend.pipeline import STAGES
from .display import show
from .errors import SsadError

MODES = ("reverse", "forward")

# The transformation stage is named after the mode: `reverse` shows the adjoint code
# before the optimizer, `forward` the tangent code before the optimizer.
_AFTER_REVERSE = STAGES.index("reverse") + 1
SHOW_STAGES = (*STAGES[:_AFTER_REVERSE], "forward", *STAGES[_AFTER_REVERSE:])

_EXAMPLES = """examples:
  ssad show model.py:loss                     gradient of loss w.r.t. its first parameter
  ssad show model.py:loss --wrt W,b           w.r.t. parameters W and b (a tuple of gradients)
  ssad show mypackage.models:loss             a function of an importable module
  ssad show model.py:loss --mode forward      the jvp (forward mode) w.r.t. its first parameter
  ssad show model.py:loss --stage anf         the function after the A-normal form pass
  ssad show model.py:loss --mode forward --stage forward
                                              the tangent code before the optimizer
  ssad show model.py:loss --no-color          plain source on a terminal too (as on a pipe)
  ssad rules                                  every NumPy/SciPy/Python function ssad differentiates
"""

_STAGE_HELP = """stages (--stage), in pipeline order:
  parse      the function as ssad parsed it
  fence      the function the fence accepted (unchanged: the fence only refuses)
  jumps      with break, continue and early return lowered to flags
  anf        after the A-normal form pass: one operation per statement
  cse        after common subexpressions are computed once
  activity   the A-normal form, with which names are active (carry derivatives)
  reverse    the adjoint code before the tape (# save / # restore mark what it records)
  tape       the adjoint code with the tape's pushes and pops, before the optimizer
  forward    the tangent code before the optimizer (--mode forward)
  optimized  the code after the optimizer (what runs; the default)

"""


class CliError(Exception):
    pass


def _load_function(spec):
    if ":" not in spec:
        raise CliError(f"expected FILE.py:FUNCTION or package.module:FUNCTION, got {spec!r}")
    location, _, qualname = spec.rpartition(":")
    if not qualname:
        raise CliError(f"no function named in {spec!r}")
    if location.endswith(".py") or os.sep in location:
        if not os.path.isfile(location):
            raise CliError(f"no such file: {location}")
        module_name = os.path.splitext(os.path.basename(location))[0]
        module_spec = importlib.util.spec_from_file_location(module_name, location)
        module = importlib.util.module_from_spec(module_spec)
        sys.path.insert(0, os.path.dirname(os.path.abspath(location)))
        sys.modules[module_name] = module
        try:
            module_spec.loader.exec_module(module)
        except SsadError:
            raise
        except Exception as error:  # the user's module failed to import
            raise CliError(f"importing {location} failed: {type(error).__name__}: {error}") from None
    else:
        try:
            module = importlib.import_module(location)
        except ImportError as error:
            raise CliError(f"cannot import module {location}: {error}") from None
    target = module
    for part in qualname.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise CliError(f"{location} has no function {qualname!r}") from None
    return target


def _parse_wrt(text):
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items:
        raise CliError("--wrt needs parameter names or indices")
    parsed = tuple(int(item) if item.lstrip("-").isdigit() else item for item in items)
    return parsed if len(parsed) > 1 else parsed[0]


def _api_stage(args):
    """The `show(stage=...)` for the command line's --mode and --stage, or a CliError."""
    if args.stage is None:
        return None
    if args.stage == "optimized" and args.no_optimize:
        raise CliError("--stage optimized and --no-optimize contradict each other; drop one")
    if args.stage in MODES and args.stage != args.mode:
        raise CliError(
            f"--stage {args.stage} shows the {args.stage}-mode transformation; "
            f"with --mode {args.mode}, use --stage {args.mode}"
        )
    if args.stage == "tape" and args.mode == "forward":
        raise CliError("forward mode records nothing: it has no tape stage; use --stage forward")
    return "reverse" if args.stage in MODES else args.stage


def _highlight(source):
    from pygments import highlight
    from pygments.formatters import TerminalFormatter
    from pygments.lexers import PythonLexer

    return highlight(source, PythonLexer(), TerminalFormatter())


def build_parser():
    parser = argparse.ArgumentParser(
        prog="ssad",
        description="Source-to-source automatic differentiation for Python and NumPy.",
        epilog=_EXAMPLES + "\nrun `ssad show --help` for every option of show.\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"ssad {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    show_parser = commands.add_parser(
        "show",
        help="print the generated gradient (or jvp) source of a function",
        description="Print the source ssad generates for a function: what ssad.grad runs or, with\n"
        "--mode forward, what ssad.jvp runs.",
        epilog=_STAGE_HELP + _EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    show_parser.add_argument("function", metavar="FILE.py:FUNC", help="FILE.py:FUNC or package.module:FUNC")
    show_parser.add_argument(
        "--wrt", default="0", help="parameters to differentiate: indices or names, comma-separated (default 0)"
    )
    show_parser.add_argument(
        "--mode",
        choices=MODES,
        default="reverse",
        help="reverse: the gradient, as ssad.grad runs it (default); forward: the jvp, as ssad.jvp runs it",
    )
    show_parser.add_argument("--no-optimize", action="store_true", help="show the code before the optimizer")
    show_parser.add_argument(
        "--stage", choices=SHOW_STAGES, help="show the code after this pipeline stage (see stages below)"
    )
    show_parser.add_argument(
        "--compile", action="store_true", help="show the code Numba compiles for grad(f, compile=True)"
    )
    show_parser.add_argument(
        "--sparse", action="store_true",
        help="show the code of grad(f, sparse=True): adjoints of parameters read by row gathers collect rows",
    )
    show_parser.add_argument(
        "--checkpoint", metavar="STRATEGY",
        help="show the code of grad(f, checkpoint=...): sqrt, revolve:S (at most S snapshots) or every:K",
    )
    show_parser.add_argument("--no-color", action="store_true", help="never highlight (as does setting NO_COLOR)")
    commands.add_parser(
        "rules",
        help="list the NumPy, SciPy and Python functions ssad differentiates",
        description="Print, as Markdown, every public function the rule registry covers and in which\n"
        "modes (the page docs/supported-functions.md).",
    )
    return parser


def _parse_checkpoint(text):
    """`--checkpoint sqrt`, `revolve:20` or `every:10` as show's `checkpoint=`."""
    if text is None or text == "sqrt":
        return text
    kind, _, count = text.partition(":")
    if kind not in ("revolve", "every") or not count.isdigit():
        raise CliError(f"--checkpoint {text}: use sqrt, revolve:S or every:K (S, K whole numbers)")
    return (kind, int(count))


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    if args.command == "rules":
        from .rules.catalog import markdown

        sys.stdout.write(markdown())
        return 0
    try:
        stage = _api_stage(args)
        function = _load_function(args.function)
        shown = show(function, _parse_wrt(args.wrt), mode=args.mode, optimize=not args.no_optimize, stage=stage,
                     compile=args.compile, sparse=args.sparse, checkpoint=_parse_checkpoint(args.checkpoint))
    except (CliError, SsadError) as error:
        message = str(error).splitlines()[0] if str(error) else type(error).__name__
        print(f"ssad: error: {message}", file=sys.stderr)
        return 1
    source = shown.source
    if sys.stdout.isatty() and not args.no_color and os.environ.get("NO_COLOR") is None:
        source = _highlight(source)
    sys.stdout.write(source)
    return 0


if __name__ == "__main__":
    sys.exit(main())
