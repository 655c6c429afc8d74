"""The catalog of the real archived release in a real browser (headless chromium through
chromium-driver and Selenium, from file://): every page loads without a console error, every
link resolves to a file and anchor of the site, the search box and the filters hide exactly the
rows they should, and a `<script>` from a record stays text."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from ngc_builder.catalog.extract import build_catalog
from ngc_builder.catalog.model import Catalog
from ngc_builder.catalog.source import load_sources
from ngc_builder.commands.catalog import CatalogOptions, catalog_command
from tests.conftest import REPO
from tests.integration.browser import available, chromium, severe
from tests.unit.catalog.records import HOSTILE, write_all

pytestmark = pytest.mark.integration

RELEASE = "26.11"
ARCHIVE = REPO / "archive"


@pytest.fixture(scope="module")
def driver() -> Iterator[webdriver.Chrome]:
    missing = available()
    if missing:
        pytest.fail(missing)
    with chromium() as browser:
        yield browser


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("catalog")
    # No build dir: the archive alone, the same on every machine.
    options = CatalogOptions(RELEASE, ARCHIVE, out, out / "no-build")
    assert catalog_command(options) == 0
    return out


@pytest.fixture(scope="module")
def recorded_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The unit tests' small archive with a release record: validation tiers, evidence, an
    expected failure's log, a previous release, and hostile strings in all of them."""
    root = tmp_path_factory.mktemp("recorded")
    fixture = write_all(root)
    options = CatalogOptions(RELEASE, fixture.archive, root / "site", record=fixture.record)
    assert catalog_command(options) == 0
    return root / "site"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return build_catalog(load_sources(ARCHIVE, RELEASE, None, False))


def visible_rows(driver: webdriver.Chrome) -> list[str]:
    rows = driver.find_elements(By.CSS_SELECTOR, "#images tbody tr")
    return [str(row.get_attribute("data-name")) for row in rows if row.is_displayed()]


def open_page(driver: webdriver.Chrome, page: Path) -> None:
    driver.get(page.as_uri())
    assert driver.execute_script("return document.readyState") == "complete"
    assert severe(driver) == [], f"console errors on {page}"


def test_every_page_loads_clean_and_every_link_resolves(driver: webdriver.Chrome, site: Path,
                                                        catalog: Catalog) -> None:
    pages = [site / "index.html", *(site / image.page for image in catalog.images)]
    assert len(pages) == len(list(site.rglob("*.html"))) > 20
    assert check_pages(driver, site, pages) > len(pages)


def test_a_recorded_release_loads_clean_and_links_resolve(driver: webdriver.Chrome,
                                                          recorded_site: Path) -> None:
    pages = sorted(recorded_site.rglob("*.html"))
    assert len(pages) == 4  # index, base, pytorch, tensorrt
    assert check_pages(driver, recorded_site, pages) > 20  # tiers, checks, sections


def check_pages(driver: webdriver.Chrome, site: Path, pages: list[Path]) -> int:
    """Open every page (no console error, a heading), then follow every link on paper: a
    file of the site, and an element with the link's anchor on it. Returns the links seen."""
    ids: dict[Path, set[str]] = {}
    links: list[tuple[Path, str]] = []
    for page in pages:
        open_page(driver, page)
        ids[page] = set(driver.execute_script(
            "return Array.from(document.querySelectorAll('[id]'), e => e.id)"))
        links += [(page, href) for href in driver.execute_script(
            "return Array.from(document.querySelectorAll('a[href]'), a => a.href)")]
        assert driver.find_element(By.TAG_NAME, "h1").text
    for page, href in links:
        url = urlsplit(href)
        assert url.scheme == "file", f"{page}: {href} leaves the site"
        target = Path(unquote(url.path))
        assert target.is_file() and site in target.parents, f"{page}: {href} is not a page"
        if url.fragment:
            assert target in ids, f"{page}: {href}: not a page of the catalog"
            assert url.fragment in ids[target], f"{page}: {href}: no such anchor"
    return len(links)


def test_search_and_filters_hide_exactly_the_other_rows(driver: webdriver.Chrome, site: Path,
                                                       catalog: Catalog) -> None:
    everything = [image.name for image in catalog.images]
    open_page(driver, site / "index.html")
    assert visible_rows(driver) == everything
    search = driver.find_element(By.ID, "search")
    search.send_keys("tensorrt")
    assert visible_rows(driver) == ["tensorrt", "tensorrt-split"]
    search.send_keys(" split")
    assert visible_rows(driver) == ["tensorrt-split"]
    assert driver.find_element(By.ID, "count").text == f"1 of {len(everything)} images"
    search.clear()
    search.send_keys("no-such-image")
    assert visible_rows(driver) == [] and driver.find_element(By.ID, "none").is_displayed()
    search.clear()
    search.send_keys(" ")  # an `input` event with nothing to match: every row again
    assert visible_rows(driver) == everything

    Select(driver.find_element(By.ID, "filter-cuda")).select_by_value("12.9")
    assert visible_rows(driver) == ["cuda-cu12", "tensorflow"]
    Select(driver.find_element(By.ID, "filter-cuda")).select_by_value("")
    Select(driver.find_element(By.ID, "filter-gpu")).select_by_value("6.0")
    assert visible_rows(driver) == ["caffe2"]
    Select(driver.find_element(By.ID, "filter-gpu")).select_by_value("")
    Select(driver.find_element(By.ID, "filter-os")).select_by_value("debian-bookworm")
    search.send_keys("mxnet")
    expected = [i.name for i in catalog.images if i.os == "debian-bookworm" and "mxnet" in i.name]
    assert visible_rows(driver) == expected == ["mxnet-cpu", "mxnet"]
    assert severe(driver) == []


def test_the_image_page_carries_the_full_digest(driver: webdriver.Chrome, site: Path,
                                                catalog: Catalog) -> None:
    pytorch = next(image for image in catalog.images if image.name == "pytorch")
    assert pytorch.digest is not None and len(pytorch.digest) == 71
    open_page(driver, site / "images" / "pytorch.html")
    assert driver.find_element(By.CSS_SELECTOR, "pre.pull").text == pytorch.pull
    previous = driver.find_element(By.ID, "diff").text
    assert "No previous release" in previous  # 26.11 is the oldest archived release


def test_a_script_in_a_record_stays_text_in_the_browser(driver: webdriver.Chrome,
                                                        recorded_site: Path) -> None:
    for page in ("images/pytorch.html", "images/tensorrt.html", "index.html"):
        open_page(driver, recorded_site / page)
        assert driver.execute_script("return document.querySelectorAll('script').length") \
            == (1 if page == "index.html" else 0)
        if page == "images/pytorch.html":
            assert HOSTILE in driver.find_element(By.TAG_NAME, "h1").text
            assert "NVIDIA H100 80GB HBM3" in driver.find_element(By.ID, "T1").find_element(
                By.XPATH, "following-sibling::table").text
