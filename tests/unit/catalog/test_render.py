"""The site: hostile strings from records are escaped, nothing external is referenced, the
same input gives the same bytes, and pages of images gone from the release are removed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ngc_builder.catalog.extract import build_catalog
from ngc_builder.catalog.render import write_site
from ngc_builder.catalog.source import load_sources
from tests.unit.catalog.records import HOSTILE, PYTORCH, write_all

pytestmark = pytest.mark.unit


def generate(root: Path, out: Path) -> dict[str, bytes]:
    record = root / "build" / "26.11" / "release.json"
    catalog = build_catalog(load_sources(root / "archive", "26.11", record, True))
    write_site(catalog, out)
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file()}


def test_a_script_in_a_label_log_or_evidence_is_text_not_html(tmp_path: Path) -> None:
    write_all(tmp_path)
    site = generate(tmp_path, tmp_path / "site")
    for name in ("index.html", "images/pytorch.html", "images/tensorrt.html"):
        page = site[name].decode()
        assert HOSTILE not in page, name
        assert "<script>alert" not in page, name
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in site["images/pytorch.html"].decode()
    assert "&lt;script&gt;" in site["images/tensorrt.html"].decode()  # error and log
    # The only script any page loads is the catalog's own.
    for name, body in site.items():
        if name.endswith(".html"):
            scripts = re.findall(r"<script[^>]*>", body.decode())
            assert scripts in ([], ['<script src="catalog.js">']), name


def test_nothing_external_is_referenced(tmp_path: Path) -> None:
    write_all(tmp_path)
    for name, body in generate(tmp_path, tmp_path / "site").items():
        for link in re.findall(r'(?:href|src)="([^"]*)"', body.decode()):
            assert "://" not in link and not link.startswith("//"), (name, link)


def test_the_image_page_shows_the_full_digest_verdicts_and_the_diff(tmp_path: Path) -> None:
    write_all(tmp_path)
    page = generate(tmp_path, tmp_path / "site")["images/pytorch.html"].decode()
    assert f"docker pull registry.example:5000/ngc/pytorch@{PYTORCH}" in page
    assert "NVIDIA H100 80GB HBM3" in page and "skip: no GPU" in page
    assert "2.14.1" in page and "Against pytorch in release 25.10" in page
    assert not re.search(r"sha256:[0-9a-f]{12}(?![0-9a-f])", page)  # no short digests


def test_same_input_same_bytes(tmp_path: Path) -> None:
    write_all(tmp_path)
    first = generate(tmp_path, tmp_path / "one")
    assert generate(tmp_path, tmp_path / "two") == first
    assert generate(tmp_path, tmp_path / "one") == first  # rewritten in place


def test_pages_of_images_no_longer_in_the_release_are_removed(tmp_path: Path) -> None:
    write_all(tmp_path)
    out = tmp_path / "site"
    (out / "images").mkdir(parents=True)
    (out / "images" / "gone.html").write_text("old")
    assert "images/gone.html" not in generate(tmp_path, out)
