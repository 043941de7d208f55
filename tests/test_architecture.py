"""The package's shape: imports go one way (no cycle), no stage reaches up to the
public API, and no module grows past what one idea needs."""

import ast
import pathlib

import ssad

PACKAGE = pathlib.Path(ssad.__file__).parent
STAGES = ("frontend", "analysis", "transform", "optimize", "backend", "runtime")
MAX_LINES = 420
# Tables, not logic: one rule per primitive, grouped by domain.
LONG_MODULES = {"rules"}


def _modules():
    """{dotted module name: path} of every module of the package."""
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ("ssad",) + path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _imports(modules):
    """{module: set of modules of the package it imports}, counting every import statement
    anywhere in the module (inside functions too); the root package `ssad` is no node."""
    graph = {}
    for module, path in modules.items():
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = package[: len(package) - node.level + 1] if node.level else []
                target = ".".join(base + ([node.module] if node.module else []))
                candidates = [target] + [f"{target}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                candidates = [alias.name for alias in node.names]
            else:
                continue
            edges |= {c for c in candidates if c in modules and c not in (module, "ssad")}
        graph[module] = edges
    return graph


def _cycles(graph):
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle():
    graph = _imports(_modules())
    cycles = _cycles(graph)
    detail = "\n".join(
        " ".join(c) + "\n  " + "\n  ".join(f"{a} -> {b}" for a in c for b in sorted(graph[a]) if b in c) for c in cycles
    )
    assert not cycles, f"import cycles in ssad/:\n{detail}"


def test_no_stage_imports_the_public_api():
    graph = _imports(_modules())
    offenders = [
        f"{module} -> {target}"
        for module, targets in graph.items()
        if module.split(".")[1:2] and module.split(".")[1] in STAGES
        for target in targets
        if target == "ssad.api" or target.split(".")[1] not in STAGES + ("errors", "registry")
        and target.split(".")[1] != "rules"
    ]
    assert not offenders, "stages import the layer above them:\n" + "\n".join(offenders)


def test_runtime_imports_nothing_of_the_compiler():
    graph = _imports(_modules())
    offenders = [
        f"{module} -> {target}"
        for module, targets in graph.items()
        if module.startswith("ssad.runtime")
        for target in targets
        if not target.startswith(("ssad.runtime", "ssad.errors", "ssad.registry"))
    ]
    assert not offenders, "generated code's run time imports the compiler:\n" + "\n".join(offenders)


def test_no_module_is_too_long():
    long = {
        str(path.relative_to(PACKAGE)): n
        for module, path in _modules().items()
        if module.split(".")[1:2] != ["rules"] or "rules" not in LONG_MODULES
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines (split them by concept): {long}"


def test_every_stage_package_states_its_contract():
    for stage in STAGES:
        doc = ast.get_docstring(ast.parse((PACKAGE / stage / "__init__.py").read_text()))
        assert doc and "Assumes" in doc and "Guarantees" in doc, f"ssad/{stage}/__init__.py lacks its contract"
