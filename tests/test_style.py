"""The code's structure: no import cycles, and a library that never imports the command
line. (The linter, the formatter and the types are their own step of .ci/run:
``python3 -m ruff check . && python3 -m ruff format --check . && python3 -m mypy``.)"""

from __future__ import annotations

from tests.conftest import ROOT


def _import_graph() -> dict[str, set[str]]:
    """Module -> bleucli modules it imports anywhere (lazy and TYPE_CHECKING imports too)."""
    import ast

    package = ROOT / "bleucli"
    modules = {}
    for path in package.rglob("*.py"):
        name = ".".join(("bleucli", *path.relative_to(package).with_suffix("").parts))
        modules[name.removesuffix(".__init__")] = path
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    target = full if full in modules else node.module
                    if target in modules and target != name:
                        graph[name].add(target)
            elif isinstance(node, ast.Import):
                graph[name] |= {a.name for a in node.names if a.name in modules} - {name}
    return graph


def _re_exports_only(package: str) -> bool:
    """Whether a package's ``__init__`` only re-exports (imports, assignments, a lazy
    ``__getattr__``/``__dir__``, TYPE_CHECKING blocks): code of its own counts as a module."""
    import ast

    path = ROOT.joinpath(*package.split("."), "__init__.py")
    if not path.exists():
        return False
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign, ast.If)):
            continue
        if isinstance(node, ast.FunctionDef) and node.name in ("__getattr__", "__dir__"):
            continue
        return False
    return True


def test_no_import_cycles() -> None:
    """The module graph is acyclic, so every layer can be read and tested on its own. The
    one allowed edge back: a package's ``__init__`` that only re-exports its own modules."""
    graph = _import_graph()
    exports_only = {name for name in graph if _re_exports_only(name)}

    def parent_init(module: str, target: str) -> bool:
        return module.startswith(target + ".") and target in exports_only

    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        state[module] = 1
        stack.append(module)
        for target in sorted(graph[module]):
            if parent_init(target, module) or parent_init(module, target):
                continue
            if state.get(target) == 1:
                cycles.append([*stack[stack.index(target) :], target])
            elif target not in state:
                visit(target)
        stack.pop()
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)
    assert cycles == [], " ; ".join(" -> ".join(c) for c in cycles)


#: The front ends: the command line (its commands and launcher) and the SacreBLEU command
#: shim. Everything else is the library they share.
FRONT_ENDS = ("bleucli.cli", "bleucli.commands", "bleucli.launch", "bleucli.__main__",
              "bleucli.sacrebleu_compat")  # fmt: skip
#: Library modules that draw progress bars on a terminal with click (nothing else of it).
PROGRESS_BARS = {"bleucli.progress", "bleucli.testsets.download"}


def _imports(path) -> set[str]:
    """Every module ``path`` imports, lazily or not, by absolute name."""
    import ast

    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return found


def test_the_library_never_imports_the_command_line() -> None:
    """The floor under every front end: metrics, tokenisers, scoring, analysis, gating,
    meta-evaluation and the server import neither the command modules nor click, so each
    can be used (and is used, by the server's workers) without a command line."""

    def front_end(module: str) -> bool:
        return any(module == f or module.startswith(f + ".") or module.startswith(f + "_")
                   for f in FRONT_ENDS)  # fmt: skip

    package = ROOT / "bleucli"
    offences = []
    for path in sorted(package.rglob("*.py")):
        name = ".".join(("bleucli", *path.relative_to(package).with_suffix("").parts))
        name = name.removesuffix(".__init__")
        if front_end(name):
            continue
        for target in sorted(_imports(path)):
            if front_end(target) or (
                (target == "click" or target.startswith("click.")) and name not in PROGRESS_BARS
            ):
                offences.append(f"{name} imports {target}")
    assert offences == [], "\n".join(offences)


def _layers() -> dict[str, int]:
    """Root module or package -> its layer, from the table in docs/contributing.md."""
    import re

    text = (ROOT / "docs" / "contributing.md").read_text(encoding="utf-8")
    layers = {}
    for number, cells in re.findall(r"^\| (\d+)\. [^|]+\| (.+) \|$", text, flags=re.MULTILINE):
        for name in re.findall(r"`([\w]+)`", cells):
            assert name not in layers, f"{name} is in two layers of docs/contributing.md"
            layers[name] = int(number)
    assert len(set(layers.values())) >= 6, "docs/contributing.md lost its table of layers"
    return layers


def test_every_layer_imports_only_from_its_own_and_lower_layers() -> None:
    """The root of ``bleucli/`` shows the layers: each root module or package is placed in
    docs/contributing.md's table, and its imports (lazy ones too) go down, never up."""
    layers = _layers()
    package = ROOT / "bleucli"
    for name in layers:  # the table names what exists
        assert any((package / f"{name}{suffix}").exists() for suffix in (".py", ".c", "")), (
            f"docs/contributing.md places {name}, which bleucli/ does not have"
        )
    graph = _import_graph()

    def root(module: str) -> str:
        return module.split(".")[1]

    unplaced = sorted({root(m) for m in graph if m != "bleucli"} - set(layers))
    assert unplaced == [], f"place these in docs/contributing.md's table of layers: {unplaced}"
    upward = [
        f"{module} (layer {layers[root(module)]}) imports {target} (layer {layers[root(target)]})"
        for module, targets in sorted(graph.items())
        if module != "bleucli"
        for target in sorted(targets)
        if target != "bleucli" and layers[root(target)] > layers[root(module)]
    ]
    assert upward == [], "\n".join(upward)
