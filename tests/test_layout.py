"""The layout keeps its promises (docs/architecture.md): small modules, no import cycles, and
the apps in their layers.

- No module over 400 lines, outside migrations, in the product or its tests.
- No import cycle between modules. The one exception is a service queuing its own Celery task
  by an import inside a function (`from reconcile_app.tasks import ...`): the tasks module
  imports the services it calls, so that import is local on purpose.
- lineage_app imports nothing of the product; the runtime app (reconcile_app) imports
  neither the sandbox nor the drills except where a deployer configures them (by dotted path).
- The agents' client (clients/python) and the examples import nothing of the product, and
  are held to the same module size.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("config", "reconcile_app", "lineage_app", "sandbox_app", "drills_app")
MAX_LINES = 400


def modules(packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    found = {}
    for package in packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = modules()


def _owner(name: str) -> str | None:
    """The first-party module an imported name lives in (None for third-party names)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports(module: str, path: Path, *, local: bool) -> set[str]:
    """First-party modules `module` imports at module level (and inside functions if local)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()

    def names_of(node: ast.Import | ast.ImportFrom) -> list[str]:
        if isinstance(node, ast.Import):
            return [alias.name for alias in node.names]
        base = node.module or ""
        if node.level:
            anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*anchor, base]) if base else ".".join(anchor)
        return [base, *(f"{base}.{alias.name}" for alias in node.names)]

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if isinstance(child, ast.Import | ast.ImportFrom) and (local or not in_function):
                for name in names_of(child):
                    owner = _owner(name)
                    if owner is not None and owner != module:
                        found.add(owner)
            visit(child, nested)

    visit(tree, False)
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def strong(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                strong(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in graph:
        if node not in index:
            strong(node)
    return found


# The agents' client and the examples are code the repository ships, held to the same size.
SHIPPED = (ROOT / "clients" / "python" / "src", ROOT / "examples")


def test_no_module_is_over_400_lines():
    paths = list(MODULES.values()) + [
        path
        for folder in (ROOT / "tests", *SHIPPED)
        for path in folder.rglob("*.py")
        if "migrations" not in path.parts
    ]
    long = {
        str(path.relative_to(ROOT)): count
        for path in paths
        if (count := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert not long, long


def test_no_module_level_import_cycle():
    graph = {name: imports(name, path, local=False) for name, path in MODULES.items()}
    assert cycles(graph) == []


def test_local_imports_close_no_cycle_except_into_tasks():
    graph = {
        name: {
            target
            for target in imports(name, path, local=True)
            # A service queuing its own task imports the tasks module locally, by design.
            if not target.endswith(".tasks") or target in imports(name, path, local=False)
        }
        for name, path in MODULES.items()
    }
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_apps_stay_in_their_layers():
    def importers_of(target: str, among: str) -> list[str]:
        return sorted(
            name
            for name, path in MODULES.items()
            if name.split(".")[0] == among
            and any(
                imported.split(".")[0] == target for imported in imports(name, path, local=True)
            )
        )

    assert importers_of("reconcile_app", "lineage_app") == []
    assert importers_of("drills_app", "reconcile_app") == []
    # The demo estate is loaded into the sandbox: the one place the product writes it.
    assert importers_of("sandbox_app", "reconcile_app") == ["reconcile_app.demo.estate_loader"]


def test_the_client_and_the_examples_use_the_api_only():
    """clients/python and examples/ reach the product over HTTP: importing a product module
    would make the client work only beside a checkout (and the example lie about how)."""
    product = {name.split(".")[0] for name in MODULES}
    offenders = []
    for folder in SHIPPED:
        for path in folder.rglob("*.py"):
            tree = ast.parse(path.read_text(), filename=str(path))
            for node in ast.walk(tree):
                names = (
                    [alias.name for alias in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                    if isinstance(node, ast.ImportFrom) and not node.level
                    else []
                )
                offenders += [
                    f"{path.relative_to(ROOT)}: {name}"
                    for name in names
                    if name.split(".")[0] in product
                ]
    assert offenders == []
