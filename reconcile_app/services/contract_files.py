"""Parse contract and source YAML files, reporting errors with the line they are on."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from reconcile_app.errors import ContractFileError

Path_ = tuple[str | int, ...]


@dataclass
class ParsedFile:
    path: str
    data: dict[str, Any]
    lines: dict[Path_, int]

    def line(self, *where: str | int) -> int | None:
        """The line of the deepest known node on `where` (1-based)."""
        probe: Path_ = tuple(where)
        while probe and probe not in self.lines:
            probe = probe[:-1]
        return self.lines.get(probe, 1)

    def fail(self, reason: str, *where: str | int) -> ContractFileError:
        return ContractFileError(self.path, self.line(*where), reason)


def _index_lines(name: str, node: yaml.Node, path: Path_, lines: dict[Path_, int]) -> None:
    # A mapping key's own line wins over the line its (block) value starts on.
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node)
            line = key_node.start_mark.line + 1
            if (*path, key) in lines:
                # YAML keeps the last of two equal keys: a second `deny:` would silently drop
                # the first one's rules, and the release gates would test what is left.
                raise ContractFileError(
                    name, line, f"key {key!r} appears twice (first on line {lines[(*path, key)]})"
                )
            lines[(*path, key)] = line
            _index_lines(name, value_node, (*path, key), lines)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _index_lines(name, item, (*path, index), lines)


def parse_file(path: Path) -> ParsedFile:
    name = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ContractFileError(name, None, f"cannot read: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ContractFileError(name, None, "not UTF-8 text") from exc
    try:
        nodes = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
        documents = list(yaml.safe_load_all(text))
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        raise ContractFileError(name, line, f"invalid YAML: {exc.problem}") from exc
    except yaml.YAMLError as exc:
        raise ContractFileError(name, None, f"invalid YAML: {exc}") from exc
    nodes = [node for node in nodes if node is not None]
    documents = [doc for doc in documents if doc is not None]
    if len(documents) != 1:
        raise ContractFileError(name, None, f"expected one YAML document, found {len(documents)}")
    if not isinstance(documents[0], dict):
        raise ContractFileError(name, 1, "the document must be a mapping")
    lines: dict[Path_, int] = {}
    _index_lines(name, nodes[0], (), lines)
    return ParsedFile(path=name, data=documents[0], lines=lines)


def yaml_paths(paths: list[str]) -> list[Path]:
    """Expand directories to their *.yaml / *.yml files, in a stable order."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml")))
        else:
            found.append(path)
    return found
