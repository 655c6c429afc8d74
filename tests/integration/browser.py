"""A real headless browser for the catalog: Debian's chromium driven by its chromium-driver
through Selenium (nothing downloaded: both binaries are given, so Selenium Manager stays idle).

Also the catalog's screenshots, run from the project root:

    .venv/bin/python -m tests.integration.browser docs/catalog docs

writes docs/catalog-index.png (the index) and docs/catalog-image.png (the PyTorch page).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

# Debian's packages put them here; other systems name theirs in the environment.
CHROMEDRIVER = os.environ.get("NGC_CHROMEDRIVER", "/usr/bin/chromedriver")
CHROMIUM = os.environ.get("NGC_CHROMIUM", "/usr/bin/chromium")
WIDTH, HEIGHT, MAX_HEIGHT = 1400, 900, 2600


def available() -> str | None:
    """Why the browser cannot run here, or None."""
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not Path(path).is_file():
            return f"{path} is missing (Debian package {package}; ci/setup-host.sh installs it)"
    return None


@contextlib.contextmanager
def chromium() -> Iterator[webdriver.Chrome]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", "--no-first-run", f"--window-size={WIDTH},{HEIGHT}",
                     "--hide-scrollbars", "--force-device-scale-factor=1"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()


def severe(driver: webdriver.Chrome) -> list[str]:
    """The console's errors since the last call (the log is drained as it is read)."""
    get_log = cast(Callable[[str], list[dict[str, Any]]], driver.get_log)  # untyped upstream
    return [str(entry["message"]) for entry in get_log("browser")
            if entry.get("level") == "SEVERE"]


def screenshot(driver: webdriver.Chrome, page: Path, target: Path) -> None:
    driver.set_window_size(WIDTH, HEIGHT)
    driver.get(page.resolve().as_uri())
    height = int(driver.execute_script("return document.documentElement.scrollHeight"))
    driver.set_window_size(WIDTH, min(max(height, HEIGHT), MAX_HEIGHT))
    if not driver.save_screenshot(str(target)):
        raise RuntimeError(f"no screenshot of {page}")
    errors = severe(driver)
    if errors:
        raise RuntimeError(f"{page}: console errors: {errors}")


def screenshots(site: Path, out: Path, image: str = "pytorch") -> list[Path]:
    targets = [(site / "index.html", out / "catalog-index.png"),
               (site / "images" / f"{image}.html", out / "catalog-image.png")]
    with chromium() as driver:
        for page, target in targets:
            screenshot(driver, page, target)
    return [target for _, target in targets]


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m tests.integration.browser SITE_DIR OUT_DIR", file=sys.stderr)
        return 2
    missing = available()
    if missing:
        print(missing, file=sys.stderr)
        return 1
    for path in screenshots(Path(argv[0]), Path(argv[1])):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
