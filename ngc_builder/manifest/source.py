"""YAML loading that remembers where every field was written, for `file:line:` errors."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ngc_builder.errors import InputError, Problem
from ngc_builder.files import INPUT_LIMIT, read_regular

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


# Bounds on what one input file may ask of the parser (docs/reliability.md): a release
# manifest is a few KB, a few levels deep, and uses aliases sparingly if at all.
MAX_BYTES = INPUT_LIMIT
MAX_DEPTH = 64
MAX_NODES = 100_000
# libyaml's loader where PyYAML was built with it (it is on Debian): about 10x faster.
LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
OPENERS = (yaml.BlockMappingStartToken, yaml.BlockSequenceStartToken,
           yaml.FlowMappingStartToken, yaml.FlowSequenceStartToken)
CLOSERS = (yaml.BlockEndToken, yaml.FlowMappingEndToken, yaml.FlowSequenceEndToken)


def load_yaml(path: Path, display: str) -> tuple[Any, SourceMap]:
    """Parse one YAML file safely, once, within the bounds above; raise InputError with the
    line of a syntax error or of what broke a bound."""
    text = _read_text(path, display)
    try:
        _check_nesting(text, display)
        node, data = _compose_and_construct(text, display)
    except yaml.reader.ReaderError as exc:
        line = text[: exc.position].count("\n") + 1
        # libyaml's reader gives the character's code, PyYAML's own the character.
        code = exc.character if isinstance(exc.character, int) else ord(exc.character)
        raise InputError([Problem(display, line, "(file)", f"control character {code:#06x} "
                                  "is not allowed in YAML")]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError([Problem(display, line, "(yaml)", str(reason))]) from None
    source = SourceMap(display)
    problems: list[Problem] = []
    if node is not None:
        _walk(node, (), source, problems)
    if problems:
        raise InputError(problems)
    return data, source


def _read_text(path: Path, display: str) -> str:
    try:  # a regular file, read no further than the bound (a FIFO or /dev/zero is a path too)
        raw = read_regular(path, MAX_BYTES)
    except OSError as exc:
        raise InputError([Problem(display, 1, "(file)", exc.strerror or str(exc))]) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = text_line_of(raw, exc.start)
        raise InputError([Problem(display, line, "(file)", "not UTF-8 text")]) from None


def _check_nesting(text: str, display: str) -> None:
    """Count nesting from the tokens (an iterative scan) before anything recurses on it.

    Newer libyaml refuses deep flow nesting itself, at its own limit and in its own words,
    before it hands over the first token. The refusal is ours to state on every build, so
    a scan error from libyaml is retold by PyYAML's own scanner, which reads token by token:
    our limit where that is what broke, else its syntax error, else libyaml's."""
    try:
        _count_depth(text, display, LOADER)
    except yaml.scanner.ScannerError:
        if LOADER is yaml.SafeLoader:
            raise
        _count_depth(text, display, yaml.SafeLoader)
        raise


def _count_depth(text: str, display: str, loader: type[yaml.SafeLoader]) -> None:
    depth = 0
    for token in yaml.scan(text, Loader=loader):
        depth += isinstance(token, OPENERS) - isinstance(token, CLOSERS)
        if depth > MAX_DEPTH:
            raise InputError([Problem(display, token.start_mark.line + 1, "(yaml)",
                                      f"nested deeper than {MAX_DEPTH} levels (the limit)")])


def _compose_and_construct(text: str, display: str) -> tuple[yaml.Node | None, Any]:
    loader = LOADER(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, None
        _check_expansion(node, display)
        return node, loader.construct_document(node)
    finally:
        loader.dispose()


def _check_expansion(root: yaml.Node, display: str) -> None:
    """Nodes and depth as the data will have them, aliases expanded: counted once per node
    (iteratively, memoised), so a billion laughs is refused in microseconds."""
    measured: dict[int, tuple[int, int]] = {}  # id -> (nodes, depth), capped
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        kids = _children(node)
        if not children_done:
            if id(node) in measured:
                continue
            if id(node) in open_nodes:
                _refuse(display, node, "an alias that contains itself")
            open_nodes.add(id(node))
            stack.append((node, True))
            stack.extend((kid, False) for kid in kids if id(kid) not in measured)
            continue
        open_nodes.discard(id(node))
        nodes = min(MAX_NODES + 1, 1 + sum(measured[id(kid)][0] for kid in kids))
        depth = 1 + max((measured[id(kid)][1] for kid in kids), default=0)
        measured[id(node)] = (nodes, depth)
        if nodes > MAX_NODES:
            _refuse(display, node, f"expands to more than {MAX_NODES} values through "
                                   "aliases (the limit)")
        if depth > MAX_DEPTH:
            _refuse(display, node, f"nested deeper than {MAX_DEPTH} levels through aliases "
                                   "(the limit)")


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _refuse(display: str, node: yaml.Node, message: str) -> None:
    raise InputError([Problem(display, node.start_mark.line + 1, "(yaml)", message)])


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
