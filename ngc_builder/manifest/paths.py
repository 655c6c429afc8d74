"""Where a release's files are, from its manifest's path alone (no parsing: the no-op check and
the loaders share these)."""

from __future__ import annotations

from pathlib import Path

SITE_FILE = "site.yaml"  # the site file's name in the project folder, when there
# The project's folders a render reads (templates may include files of these only): what a
# no-op re-run's fingerprint covers of the project, with the manifest, lock and site file.
PROJECT_FOLDERS = ("templates", "frameworks", "base-images", "baselines")


def default_root(manifest: Path) -> Path:
    """The project folder holding releases/, frameworks/, base-images/ and templates/."""
    return manifest.resolve().parent.parent


def lock_path(manifest: Path) -> Path:
    """`releases/26.11.yaml` -> `releases/26.11.lock.json`: next to it, reviewed with it."""
    return manifest.with_name(f"{manifest.stem}.lock.json")


def probe_modules(folder: Path) -> list[Path]:
    """A framework folder's probe.py and the probe_*.py modules it may be split into."""
    probe = folder / "probe.py"
    return [probe, *sorted(probe.parent.glob("probe_*.py"))]
