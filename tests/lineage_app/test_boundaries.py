"""lineage_app stands alone: it imports nothing of reconcile_app (not even inside a function),
its modules import no cycle, its templates load nothing of reconcile's, and no module of it
is over 400 lines. reconcile_app may import lineage_app; never the other way round."""

from __future__ import annotations

import ast
from pathlib import Path

import lineage_app

PACKAGE = Path(lineage_app.__file__).parent
TEMPLATES = Path(__file__).resolve().parents[2] / "templates" / "lineage_app"
MAX_LINES = 400


def lineage_modules() -> dict[str, Path]:
    """Every module of lineage_app by dotted name (migrations are Django's, not ours)."""
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "migrations" in path.relative_to(PACKAGE).parts:
            continue
        parts = ["lineage_app", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def imports_of(module: str, path: Path) -> list[tuple[int, str]]:
    """(line, dotted name) of every import anywhere in the module, relative ones resolved."""
    found = []
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base]) if base else ".".join(anchor)
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def test_lineage_app_imports_nothing_from_reconcile_app():
    offending: dict[str, str] = {}
    for module, path in lineage_modules().items():
        for line, name in imports_of(module, path):
            if name == "reconcile_app" or name.startswith("reconcile_app."):
                # One report per import statement: the module it imports from.
                where = f"{path.relative_to(PACKAGE.parent)}:{line}"
                offending[where] = min(offending.get(where, name), name, key=len)
    assert not offending, "\n".join(f"{where} imports {name}" for where, name in offending.items())


def test_the_import_walk_sees_local_and_relative_imports(tmp_path):
    """The check above would catch an import hidden in a function or written relatively."""
    source = tmp_path / "sample.py"
    source.write_text(
        "def later():\n    from reconcile_app.models import Effect\n\nfrom . import registry\n"
    )
    names = {name for _, name in imports_of("lineage_app.sample", source)}
    assert "reconcile_app.models" in names and "lineage_app.registry" in names


def test_lineage_app_modules_import_no_cycle():
    modules = lineage_modules()

    def module_of(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph = {
        module: {
            target
            for _, name in imports_of(module, path)
            if (target := module_of(name)) is not None
            and target != module
            # Importing a submodule runs its package's __init__; that is not a cycle.
            and not module.startswith(f"{target}.")
        }
        for module, path in modules.items()
    }
    cycles: list[list[str]] = []

    def visit(module: str, trail: list[str]) -> None:
        for target in sorted(graph[module]):
            if target in trail:
                cycles.append([*trail[trail.index(target) :], target])
            elif target not in done:
                visit(target, [*trail, target])
        done.add(module)

    done: set[str] = set()
    for module in sorted(graph):
        if module not in done:
            visit(module, [module])
    assert not cycles, "\n".join(" -> ".join(cycle) for cycle in cycles)


def test_lineage_templates_load_nothing_of_reconcile():
    for template in TEMPLATES.rglob("*.html"):
        text = template.read_text()
        assert "reconcile_tags" not in text, template
        assert "reconcile_app/" not in text, template


def test_no_lineage_module_is_over_400_lines():
    long = {
        str(path.relative_to(PACKAGE.parent)): lines
        for path in lineage_modules().values()
        if (lines := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert not long
