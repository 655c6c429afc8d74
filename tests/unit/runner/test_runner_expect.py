from __future__ import annotations

import json
from pathlib import Path

import pytest

from ngc_builder.runner.expect import ExpectError, load_expect, merge

pytestmark = pytest.mark.unit


def write(directory: Path, name: str, data: object) -> None:
    (directory / name).write_text(json.dumps(data), encoding="utf-8")


def test_merge_overrides_and_merges_dicts_shallowly() -> None:
    base = {"image": "base", "wheels": {"a": "1", "b": "1"}, "libraries": {"x": {"deep": 1}}}
    layer = {"image": "jax", "wheels": {"b": "2", "c": "3"}, "libraries": {"x": {"other": 2}}}
    merged = merge(base, layer)
    assert merged["image"] == "jax"
    assert merged["wheels"] == {"a": "1", "b": "2", "c": "3"}
    assert merged["libraries"] == {"x": {"other": 2}}  # one level deep only
    assert base["wheels"] == {"a": "1", "b": "1"}  # inputs untouched


def test_load_merges_in_sorted_filename_order(tmp_path: Path) -> None:
    write(tmp_path, "20-framework.json", {"image": "jax", "framework": "jax"})
    write(tmp_path, "00-base.json", {"image": "base", "python": "3.13"})
    write(tmp_path, "10-cuda.json", {"image": "cuda-cu13", "libraries": {"cudart": "13.2.86"}})
    (tmp_path / "notes.txt").write_text("ignored")
    expect = load_expect(tmp_path)
    assert expect == {
        "image": "jax",
        "python": "3.13",
        "framework": "jax",
        "libraries": {"cudart": "13.2.86"},
    }


def test_missing_dir(tmp_path: Path) -> None:
    with pytest.raises(ExpectError, match="not found"):
        load_expect(tmp_path / "nope")


def test_empty_dir_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(ExpectError, match="no expectation files"):
        load_expect(tmp_path)


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("{not json", "cannot read"),
        ("[1, 2]", "top level must be a JSON object"),
        ('{"python": 3.13}', "'python' must be a string"),
        ('{"python": "three"}', "not a numeric version"),
        ('{"wheels": ["nvidia-cublas"]}', "'wheels' must be an object"),
        ('{"libraries": {"cudart": 13}}', "libraries.cudart must be a version string"),
        ('{"libraries": {"cudart": "latest"}}', "not a numeric version"),
        ('{"probe": "../../etc/evil"}', "plain name"),
        ('{"extras": "cuda13"}', "'extras' must list extra names"),
        ('{"extras": [""]}', "'extras' must list extra names"),
        ('{"host_mode": "yes"}', "'host_mode' must be true or false"),
    ],
)
def test_invalid_expectations(tmp_path: Path, content: str, match: str) -> None:
    (tmp_path / "00.json").write_text(content, encoding="utf-8")
    with pytest.raises(ExpectError, match=match):
        load_expect(tmp_path)


def test_extras_and_host_mode_are_kept(tmp_path: Path) -> None:
    write(tmp_path, "20-framework.json", {"framework": "jax", "extras": ["cuda13"],
                                          "host_mode": True})
    assert load_expect(tmp_path) == {"framework": "jax", "extras": ["cuda13"], "host_mode": True}
