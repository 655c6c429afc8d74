"""YAML loading that remembers where every field was written, for `file:line:` errors."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ngc_builder.errors import InputError, Problem

Loc = tuple[str | int, ...]


@dataclass
class SourceMap:
    """Line numbers (1-based) of every key and list item in one YAML file."""

    file: str
    lines: dict[Loc, int] = field(default_factory=dict)

    def line_of(self, loc: Sequence[str | int]) -> int:
        # Pydantic locations can go deeper than the YAML (e.g. into a parsed value):
        # fall back to the nearest enclosing node that the file does have.
        for depth in range(len(loc), 0, -1):
            found = self.lines.get(tuple(loc[:depth]))
            if found is not None:
                return found
        return 1

    def problem(self, loc: Sequence[str | int], message: str) -> Problem:
        return Problem(self.file, self.line_of(loc), format_loc(loc), message)


def format_loc(loc: Sequence[str | int]) -> str:
    """("images", 1, "version") -> "images[1].version"."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text or "(top)"


def load_yaml(path: Path, display: str) -> tuple[Any, SourceMap]:
    """Parse one YAML file safely; raise InputError with the line of a syntax error."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError([Problem(display, 1, "(file)", exc.strerror or str(exc))]) from None
    except UnicodeDecodeError as exc:
        line = text_line_of(path.read_bytes(), exc.start)
        raise InputError([Problem(display, line, "(file)", "not UTF-8 text")]) from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        reason = getattr(exc, "problem", None) or str(exc)
        raise InputError([Problem(display, line, "(yaml)", str(reason))]) from None
    source = SourceMap(display)
    problems: list[Problem] = []
    if node is not None:
        _walk(node, (), source, problems)
    if problems:
        raise InputError(problems)
    return data, source


def text_line_of(data: bytes, offset: int) -> int:
    return data[:offset].count(b"\n") + 1


def _walk(node: yaml.Node, loc: Loc, source: SourceMap, problems: list[Problem]) -> None:
    source.lines.setdefault(loc, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        _walk_mapping(node, loc, source, problems)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, (*loc, index), source, problems)


def _walk_mapping(
    node: yaml.MappingNode, loc: Loc, source: SourceMap, problems: list[Problem]
) -> None:
    seen: set[str] = set()
    for key_node, value_node in node.value:
        key = str(key_node.value)
        child = (*loc, key)
        if key in seen:
            # PyYAML keeps the last duplicate silently; a release file must not.
            problems.append(
                Problem(source.file, key_node.start_mark.line + 1, format_loc(child),
                        "duplicate key")
            )
        seen.add(key)
        source.lines[child] = key_node.start_mark.line + 1
        _walk(value_node, child, source, problems)
