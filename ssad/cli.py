"""The `ssad` command line: `ssad show FILE.py:FUNC` prints a generated gradient.

On a terminal the source is highlighted; on a pipe it is plain source that
compiles. Errors are one line (`ssad: error: ...`) and exit with status 1.
"""

import argparse
import importlib
import importlib.util
import os
import sys

from . import __version__
from .api import STAGES, show
from .errors import SsadError

_EXAMPLES = """examples:
  ssad show model.py:loss               gradient of loss w.r.t. its first parameter
  ssad show model.py:loss --wrt W,b     w.r.t. parameters W and b (a tuple of gradients)
  ssad show mypackage.models:loss       a function of an importable module
  ssad show model.py:loss --stage anf   the function after the A-normal form pass
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


def _highlight(source):
    from pygments import highlight
    from pygments.formatters import TerminalFormatter
    from pygments.lexers import PythonLexer

    return highlight(source, PythonLexer(), TerminalFormatter())


def build_parser():
    parser = argparse.ArgumentParser(
        prog="ssad",
        description="Source-to-source automatic differentiation for Python and NumPy.",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"ssad {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    show_parser = commands.add_parser(
        "show",
        help="print the generated gradient source of a function",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    show_parser.add_argument("function", metavar="FILE.py:FUNC", help="FILE.py:FUNC or package.module:FUNC")
    show_parser.add_argument(
        "--wrt", default="0", help="parameters to differentiate: indices or names, comma-separated (default 0)"
    )
    show_parser.add_argument("--no-optimize", action="store_true", help="show the code before the optimizer")
    show_parser.add_argument("--stage", choices=STAGES, help="show the code after this pipeline stage")
    show_parser.add_argument("--no-color", action="store_true", help="never highlight")
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        function = _load_function(args.function)
        shown = show(function, _parse_wrt(args.wrt), optimize=not args.no_optimize, stage=args.stage)
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
