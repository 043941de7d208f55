"""Every code block in README.md and docs/*.md runs here, so the docs cannot go stale.

The convention, for whoever writes a page:

- A ```python block is executed. The blocks of one page run in order in one
  namespace (a module of its own), so later blocks use what earlier ones defined.
  Each block is written to a file first, so `inspect.getsource` and ssad can read
  the functions it defines.
- `<!-- file: model.py -->` on the line before a ```python block names that file
  (default: `<page>_<line>.py`). A ```console block or an `output of:` marker can
  then run `ssad show model.py:FUNC` on it.
- `<!-- output -->` before a block (of any language, ```text or ```python for a
  listing) says the block is what the preceding ```python block prints. It is not
  executed; it is compared with the printed text.
- `<!-- output of: COMMAND -->` before a block says the block is what COMMAND
  prints: `ssad ...` runs the command line (in the page's directory, as on a
  pipe: plain source), anything else is Python run in the page's namespace. This
  is how listings of generated code stay equal to what ssad generates now.
- In a ```console block, each `$ ssad ...` (or `$ python -m ssad ...`) line is run
  and the lines after it, up to the next `$`, are compared with what it prints
  (stdout and stderr). Other commands (`$ make test`) are shown, not run.
- `<!-- setup: CODE -->` is Python run where it stands, unseen by readers: data
  the prose leaves implicit (`W`, `x`, `y` of the README's first example).
- Any other block (```text, ```sh, a bare ```) is shown, not run.

Comparisons ignore trailing spaces, blank lines at either end, and the path of
the page's temporary directory. `SSAD_UPDATE_DOCS=1 pytest tests/test_docs.py`
rewrites each compared block with what is generated now: review the diff.

Each block is one test, named `page:line` after the line of its opening fence.
"""

import contextlib
import difflib
import io
import os
import re
import shlex
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
UPDATE = os.environ.get("SSAD_UPDATE_DOCS") == "1"

_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>```+|~~~+)\s*(?P<lang>[\w+-]*)\s*$")
_MARKER = re.compile(r"^\s*(?P<kind>file|output of|output|setup)\s*(?::\s*(?P<arg>.*?))?\s*$", re.S)


@dataclass
class Step:
    """One test: a block to run or to compare, or a hidden setup."""

    page: str  # path relative to the repository, e.g. docs/tutorial.md
    line: int  # 1-based line of the opening fence (or of the setup comment)
    kind: str  # "python", "setup", "output", "output of", "console"
    text: str  # the block's contents (or the setup's code)
    argument: str = ""  # the file name, or the command whose output this is
    body_lines: tuple = ()  # (first, end) 0-based line range of the block's contents

    @property
    def id(self):
        return f"{self.page}:{self.line}"


def parse_page(path):
    """The steps of one Markdown page, in document order."""
    lines = path.read_text().splitlines()
    page = path.relative_to(ROOT).as_posix()
    steps = []
    pending = None  # (kind, argument) of a marker waiting for its block
    i = 0
    while i < len(lines):
        text = lines[i]
        if text.lstrip().startswith("<!--"):
            start = i
            comment = text.lstrip()[4:]
            while "-->" not in comment and i + 1 < len(lines):
                i += 1
                comment += "\n" + lines[i]
            comment = comment.split("-->")[0]
            marker = _MARKER.match(comment)
            if marker:
                kind, argument = marker["kind"], (marker["arg"] or "").strip()
                if kind == "setup":
                    steps.append(Step(page, start + 1, "setup", argument))
                else:
                    pending = (kind, argument)
            i += 1
            continue
        fence = _FENCE.match(text)
        if not fence:
            if text.strip() and pending is not None:
                raise ValueError(f"{page}:{i + 1}: a <!-- {pending[0]} --> marker is not followed by a code block")
            i += 1
            continue
        opening, indent, lang = i, len(fence["indent"]), fence["lang"].lower()
        i += 1
        while i < len(lines) and lines[i].strip() != fence["fence"]:
            i += 1
        body = [line[indent:] for line in lines[opening + 1 : i]]
        kind, argument = pending or (None, "")
        pending = None
        if kind in ("output", "output of"):
            steps.append(Step(page, opening + 1, kind, "\n".join(body), argument, (opening + 1, i)))
        elif lang in ("python", "py"):
            steps.append(Step(page, opening + 1, "python", "\n".join(body) + "\n", argument if kind == "file" else ""))
        elif lang == "console" and any(_is_ssad_command(line) for line in body):
            steps.append(Step(page, opening + 1, "console", "\n".join(body), "", (opening + 1, i)))
        i += 1
    return steps


def _is_ssad_command(line):
    return line.startswith("$ ssad ") or line.startswith("$ python -m ssad ")


@contextlib.contextmanager
def _working_directory(directory):
    previous = os.getcwd()
    os.chdir(directory)
    try:
        yield
    finally:
        os.chdir(previous)


def normalize(text, directory):
    text = text.replace(str(directory) + os.sep, "")
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


@dataclass
class Page:
    """The state of one page's run: its namespace, its directory, what each step gave."""

    path: Path
    steps: list
    directory: Path = None
    module: types.ModuleType = None
    done: int = 0
    printed: str = ""  # what the last ```python block printed
    failed: Step = None  # the first executed block that raised
    results: dict = field(default_factory=dict)  # step index -> exception or None
    updates: list = field(default_factory=list)  # (body_lines, new text) for SSAD_UPDATE_DOCS

    def start(self, directory):
        self.directory = directory
        name = "docs_" + re.sub(r"\W", "_", self.path.stem)
        self.module = types.ModuleType(name)
        sys.modules[name] = self.module

    def run_until(self, index):
        while self.done <= index:
            step = self.steps[self.done]
            try:
                with _working_directory(self.directory):
                    self._run(step)
                self.results[self.done] = None
            except Exception as error:  # kept, and raised by this step's own test
                self.results[self.done] = error
                if step.kind in ("python", "setup") and self.failed is None:
                    self.failed = step
            self.done += 1
        if self.done == len(self.steps) and self.updates:
            self._write_updates()

    def _run(self, step):
        if step.kind in ("python", "setup"):
            filename = step.argument or f"{self.path.stem}_{step.line}.py"
            source_file = self.directory / filename
            source_file.write_text(step.text)
            code = compile(step.text, str(source_file), "exec")
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(code, self.module.__dict__)
            if step.kind == "python":
                self.printed = out.getvalue()
        elif step.kind == "output":
            self._compare(step, self.printed)
        elif step.kind == "output of":
            self._compare(step, self._command(step.argument))
        elif step.kind == "console":
            self._check_console(step)

    def _command(self, command):
        out = io.StringIO()
        if command.startswith("ssad ") or command.startswith("python -m ssad "):
            from ssad import cli

            argv = shlex.split(command)
            argv = argv[3:] if argv[0] == "python" else argv[1:]
            saved_path, saved_modules = list(sys.path), dict(sys.modules)
            try:
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                    cli.main(argv)
            finally:
                sys.path[:] = saved_path
                # forget the page's files the command loaded, not the libraries it imported
                # (a library imported anew would make new functions, which the rules do not know)
                for added in set(sys.modules) - set(saved_modules):
                    if str(getattr(sys.modules[added], "__file__", None) or "").startswith(str(self.directory)):
                        del sys.modules[added]
                sys.modules.update(saved_modules)
        else:
            with contextlib.redirect_stdout(out):
                exec(compile(command, f"<{self.path.name} command>", "exec"), self.module.__dict__)
        return out.getvalue()

    def _check_console(self, step):
        lines = step.text.splitlines()
        generated, i = [], 0
        while i < len(lines):
            generated.append(lines[i])
            i += 1
            if _is_ssad_command(generated[-1]):
                generated.extend(self._command(generated[-1][2:]).splitlines())
                while i < len(lines) and not lines[i].startswith("$ "):
                    i += 1
        self._compare(step, "\n".join(generated))

    def _compare(self, step, generated):
        documented = normalize(step.text, self.directory)
        generated = normalize(generated, self.directory)
        if documented == generated:
            return
        if UPDATE:
            self.updates.append((step.body_lines, generated))
            return
        diff = "\n".join(
            difflib.unified_diff(
                documented.splitlines(), generated.splitlines(), f"{step.id} (documented)", "generated now", lineterm=""
            )
        )
        raise AssertionError(
            f"{step.id}: the block differs from what {step.argument or 'the preceding block'} prints now "
            f"(SSAD_UPDATE_DOCS=1 rewrites it):\n{diff}"
        )

    def _write_updates(self):
        lines = self.path.read_text().splitlines()
        for (first, end), text in sorted(self.updates, reverse=True):
            lines[first:end] = text.splitlines()
        self.path.write_text("\n".join(lines) + "\n")
        self.updates.clear()


@pytest.fixture(scope="module", autouse=True)
def _registry_restored():
    """Rules the pages register (`@ssad.adjoint(np.interp)`) do not outlive this module."""
    import importlib

    from ssad.registry import REGISTRY

    # the rules of libraries the pages import (scipy.special) are ssad's own: register
    # them before taking the snapshot, so that restoring it keeps them
    for library in list(REGISTRY._deferred):
        with contextlib.suppress(ImportError):
            importlib.import_module(library)
    REGISTRY._load_deferred()
    saved = [dict(table) for table in (REGISTRY._adjoints, REGISTRY._tangents, REGISTRY._nondifferentiable)]
    yield
    with REGISTRY._lock:
        for table, before in zip(
            (REGISTRY._adjoints, REGISTRY._tangents, REGISTRY._nondifferentiable), saved, strict=True
        ):
            table.clear()
            table.update(before)
        REGISTRY.version += 1


_pages = {path: parse_page(path) for path in PAGES}
_state = {}
CASES = [(path, index) for path, steps in _pages.items() for index in range(len(steps))]


@pytest.mark.parametrize(("path", "index"), CASES, ids=[_pages[p][i].id for p, i in CASES])
def test_block(path, index, tmp_path_factory):
    page = _state.get(path)
    if page is None:
        page = _state[path] = Page(path, _pages[path])
        page.start(tmp_path_factory.mktemp(path.stem))
    page.run_until(index)
    error = page.results[index]
    if error is not None:
        raise error
    if page.failed is not None and page.steps.index(page.failed) < index:
        pytest.skip(f"runs after {page.failed.id}, which failed")


def test_every_page_is_linked_from_the_index_and_every_link_resolves():
    index = (ROOT / "docs" / "index.md").read_text()
    for path in PAGES:
        if path.parent.name == "docs" and path.name != "index.md":
            assert f"]({path.name})" in index, f"docs/index.md does not link to {path.name}"
    assert "](docs/index.md)" in (ROOT / "README.md").read_text()
    for path in PAGES:
        for target in re.findall(r"\]\(([^)\s#]+)(?:#[^)]*)?\)", path.read_text()):
            if "://" in target:
                continue
            assert (path.parent / target).exists(), f"{path.relative_to(ROOT)} links to missing {target}"
