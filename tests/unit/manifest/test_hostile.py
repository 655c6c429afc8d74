"""Hostile YAML and values: each refused in one line naming file, line and the bound, in
bounded time (every case here would hang, crash or exhaust memory without its bound)."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
import yaml

from ngc_builder.errors import InputError
from ngc_builder.manifest import source
from ngc_builder.manifest.models import VERSION_RE
from ngc_builder.manifest.source import MAX_BYTES, MAX_DEPTH, MAX_NODES, load_yaml

pytestmark = pytest.mark.unit
# The pattern before: exponential backtracking on a near miss.
BACKTRACKING_VERSION_RE = re.compile(r"[0-9]+(\.[0-9]+)*([.+_-]?[A-Za-z0-9]+)*")


def refusal(tmp_path: Path, text: str | bytes) -> str:
    path = tmp_path / "release.yaml"
    if isinstance(text, str):
        path.write_text(text)
    else:
        path.write_bytes(text)
    with pytest.raises(InputError) as caught:
        load_yaml(path, "release.yaml")
    [problem] = caught.value.problems
    return str(problem)


def laughs(levels: int) -> str:
    lines = ['l0: &l0 ["ha","ha","ha","ha","ha","ha","ha","ha","ha"]']
    lines += [f"l{i}: &l{i} [{','.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_is_refused_at_the_alias_that_breaks_the_bound(tmp_path: Path) -> None:
    assert refusal(tmp_path, laughs(9)) == (
        f"release.yaml:6: (yaml): expands to more than {MAX_NODES} values through aliases "
        "(the limit)")


def test_aliases_within_the_bound_still_load(tmp_path: Path) -> None:
    path = tmp_path / "release.yaml"
    path.write_text(laughs(3))
    data, _ = load_yaml(path, "release.yaml")
    assert len(data["l3"]) == 9 and data["l3"][0][0][0] == data["l0"]


@pytest.mark.parametrize(("text", "line"), [
    ("".join("  " * i + f"k{i}:\n" for i in range(600)) + "  " * 600 + "v\n", MAX_DEPTH + 1),
    ("a: " + "[" * 2000 + "]" * 2000 + "\n", 1),
])
def test_deep_nesting_is_refused_before_anything_recurses(tmp_path: Path, text: str,
                                                           line: int) -> None:
    assert refusal(tmp_path, text) == (
        f"release.yaml:{line}: (yaml): nested deeper than {MAX_DEPTH} levels (the limit)")


class RefusesAtTenLevels(yaml.SafeLoader):
    """A scanner that, like libyaml 0.2.5 with PyYAML 6.0.4, refuses deep flow nesting
    itself, in its own words, before it yields a token (here at 10 levels, not 1000)."""

    def fetch_more_tokens(self) -> None:
        if self.flow_level > 10:
            raise yaml.scanner.ScannerError(None, None, "exceeded maximum nesting depth",
                                            self.get_mark())
        super().fetch_more_tokens()


class RefusesEverything(yaml.SafeLoader):
    def fetch_more_tokens(self) -> None:
        raise yaml.scanner.ScannerError(None, None, "stricter than PyYAML", self.get_mark())


@pytest.mark.parametrize("loader", sorted({source.LOADER, yaml.SafeLoader, RefusesAtTenLevels},
                                          key=str))
def test_the_nesting_refusal_is_ours_whatever_the_scanner_refuses_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loader: type[yaml.SafeLoader]) -> None:
    monkeypatch.setattr(source, "LOADER", loader)
    assert refusal(tmp_path, "a: " + "[" * 2000 + "]" * 2000 + "\n") == (
        f"release.yaml:1: (yaml): nested deeper than {MAX_DEPTH} levels (the limit)")


def test_within_our_bound_but_past_the_scanners_its_refusal_stands(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(source, "LOADER", RefusesAtTenLevels)
    assert refusal(tmp_path, "a: " + "[" * 20 + "]" * 20 + "\n") == (
        "release.yaml:1: (yaml): exceeded maximum nesting depth")


def test_a_scan_error_only_the_faster_scanner_sees_is_still_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(source, "LOADER", RefusesEverything)
    assert refusal(tmp_path, "a: 1\n") == "release.yaml:1: (yaml): stricter than PyYAML"


def test_a_chain_of_aliases_cannot_nest_past_the_bound(tmp_path: Path) -> None:
    text = "a0: &a0 [x]\n" + "".join(f"a{i}: &a{i} [*a{i - 1}]\n" for i in range(1, 300))
    assert refusal(tmp_path, text).endswith(
        f"nested deeper than {MAX_DEPTH} levels through aliases (the limit)")


def test_an_alias_that_contains_itself(tmp_path: Path) -> None:
    assert refusal(tmp_path, "a: &a [*a]\n") == \
        "release.yaml:1: (yaml): an alias that contains itself"


def test_a_large_file_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    assert refusal(tmp_path, "#" * (MAX_BYTES + 1)) == \
        "release.yaml:1: (file): larger than 1024 KiB (the limit)"
    with pytest.raises(InputError, match=r"not a regular file \(a character device\)"):
        load_yaml(Path("/dev/zero"), "/dev/zero")  # refused before any read


def test_a_control_character_names_its_own_line(tmp_path: Path) -> None:
    text = "release: '26.11'\n" * 7 + "registry: x\x00\n"
    assert refusal(tmp_path, text) == \
        "release.yaml:8: (file): control character 0x0000 is not allowed in YAML"


def test_a_syntax_error_is_one_line(tmp_path: Path) -> None:
    message = refusal(tmp_path, "a: [1, 2\nb: 3\n")
    assert message.startswith("release.yaml:") and "\n" not in message


def test_the_linear_version_pattern_accepts_exactly_what_the_old_one_did() -> None:
    for length in range(7):
        for letters in itertools.product("0a.+_-Z9 ", repeat=length):
            text = "".join(letters)
            assert bool(VERSION_RE.fullmatch(text)) == bool(
                BACKTRACKING_VERSION_RE.fullmatch(text)), text


def test_a_near_miss_version_is_refused_at_once() -> None:
    # 28 s for the old pattern at 35 characters, doubling with each one more: this one would
    # not finish; the atomic numeric part and one-character tail steps make it linear.
    assert VERSION_RE.fullmatch("2.16.0.dev20261101+g0123456789abcd" * 20 + " ") is None
