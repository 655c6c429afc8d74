"""Package manifests' diff and the size gate."""

from __future__ import annotations

import pytest

from ngc_builder.assemble import packages, sizegate
from ngc_builder.manifest.load import load_release
from ngc_builder.manifest.sizes import parse_size
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE

pytestmark = pytest.mark.unit


def test_package_diff() -> None:
    change = packages.diff({"jax": "0.11.0", "six": "1.16", "numpy": "2.3"},
                           {"jax": "0.12.0", "numpy": "2.3", "optree": "0.17"})
    assert change.added == {"optree": "0.17"} and change.removed == {"six": "1.16"}
    assert change.changed == {"jax": ("0.11.0", "0.12.0")}
    assert packages.diff({"a": "1"}, {"a": "1"}).empty


def test_size_gate_maths() -> None:
    assert parse_size("6.3 GB") == 6_300_000_000
    assert parse_size("900MiB") == 900 * 2**20
    for bad in ("6.3", "lots GB", "5 TB"):
        with pytest.raises(ValueError):
            parse_size(bad)
    assert not sizegate.over_limit(120, 100) and sizegate.over_limit(121, 100)
    image = {"/opt/venv/lib/python3.13/site-packages/torch/lib/a.so": 900,
             "/opt/venv/lib/python3.13/site-packages/torch/b.py": 100,
             "/usr/lib/x.so": 50, "/etc/same": 10}
    parent = {"/usr/lib/x.so": 20, "/etc/same": 10}
    assert sizegate.largest_added(image, parent) == [
        ("/opt/venv/lib/python3.13/site-packages/torch", 1000), ("/usr/lib/x.so", 30)]


def test_a_size_baseline_must_parse(write_release: WriteRelease) -> None:
    from ngc_builder.errors import InputError

    bad = GOOD_RELEASE.replace('version: "0.12.0"', 'version: "0.12.0"\n    size_baseline: "big"')
    with pytest.raises(InputError) as caught:
        load_release(write_release(bad))
    assert "size_baseline" in str(caught.value.problems[0].field)
