"""The catalog as a static site: `index.html`, one page per image under `images/`, one CSS and
one JS file. Jinja with autoescape on (records hold strings from logs and labels); nothing
external is referenced, so the site works from file:// and offline; the same catalog gives
the same bytes."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from ngc_builder.catalog.model import TIERS, Catalog, Image
from ngc_builder.files import write_atomic

HERE = Path(__file__).parent
STATIC = ("catalog.css", "catalog.js")
GB = 1_000_000_000


def environment() -> Environment:
    env = Environment(loader=FileSystemLoader(str(HERE / "templates")), autoescape=True,
                      undefined=StrictUndefined, keep_trailing_newline=True,
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["size"] = size
    env.filters["status_class"] = status_class
    env.globals["search_words"] = row_search
    return env


def size(size_bytes: int | None) -> str:
    return f"{size_bytes / GB:.2f} GB" if size_bytes else "not recorded"


def status_class(verdict: str | None) -> str:
    """`pass (8 skipped)` -> pass, `skip: no GPU` -> skip: the CSS class of a verdict."""
    word = (verdict or "").split(" ")[0].rstrip(":")
    return word if word in ("pass", "fail", "skip", "error") else "none"


def pages(catalog: Catalog) -> dict[str, str]:
    """Every file of the site, by its path under the output folder."""
    env = environment()
    site = {"index.html": env.get_template("index.html.j2").render(
        catalog=catalog, filters=_filters(catalog), root="")}
    image_page = env.get_template("image.html.j2")
    for image in catalog.images:
        site[image.page] = image_page.render(catalog=catalog, image=image, tiers=TIERS,
                                             root="../")
    static = resources.files("ngc_builder.catalog") / "static"
    for name in STATIC:
        site[name] = (static / name).read_text(encoding="utf-8")
    return site


def _filters(catalog: Catalog) -> list[tuple[str, str, tuple[str, ...]]]:
    """(row data attribute, label, values) of each filter on the index."""
    return [("framework", "Framework", catalog.options("framework")),
            ("cuda", "CUDA", catalog.options("cuda")),
            ("os", "OS", catalog.options("os")),
            ("gpu", "GPU target", catalog.options("gpu_targets")),
            ("platform", "Platform", catalog.options("platforms"))]


def write_site(catalog: Catalog, out: Path) -> list[Path]:
    """Write the site; pages of images no longer in the catalog are removed."""
    site = pages(catalog)
    written = []
    for relative, text in sorted(site.items()):
        path = out / relative
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            write_atomic(path, text)
        path.chmod(0o644)  # a site: readable by the web server, not only by its writer
        written.append(path)
    for stale in sorted((out / "images").glob("*.html")):
        if stale not in written:
            stale.unlink()
    return written


def row_search(image: Image) -> str:
    """The words the index's search box matches for a row."""
    words = [image.name, image.title, image.framework, image.framework_version, image.python,
             image.os, image.cuda, image.state, *image.gpu_targets, *image.platforms]
    return " ".join(word.lower() for word in words if word and word != "-")
