"""The options several commands share, declared once."""

from __future__ import annotations

from pathlib import Path

import click

MANIFEST = click.argument("manifest", type=click.Path(path_type=Path))
ROOT = click.option("--root", type=click.Path(path_type=Path, file_okay=False), default=None,
                    help="Project folder with frameworks/, base-images/, templates/ "
                         "(default: the manifest's folder's parent).")
JSON = click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
REGISTRY = click.option("--registry", default=None,
                        help="Push to this registry (host[:port][/namespace]) instead of the "
                             "manifest's.")
OFFLINE = click.option("--offline", is_flag=True,
                       help="Skip the stack check (it reads wheel metadata from the index).")

OS_SOURCE = click.option("--os-source", type=click.Choice(["auto", "pull", "bootstrap"]),
                         default="auto", show_default=True,
                         help="How to get the OS base: pull it, or debootstrap it.")
BUILD_DIR = click.option("--build-dir", type=click.Path(path_type=Path), default=Path("build"),
                         show_default=True, help="Where contexts, logs, reports and records go.")
SITE = click.option("--site", type=click.Path(path_type=Path, dir_okay=False), default=None,
                    envvar="NGC_SITE",
                    help="The site file: Slurm, CI runners [env NGC_SITE; "
                         "default: ROOT/site.yaml when there].")
CACHE_DIR = click.option("--cache-dir", type=click.Path(path_type=Path, file_okay=False),
                         default=None, envvar="NGC_CACHE_DIR",
                         help="The package cache [env NGC_CACHE_DIR; default "
                              "~/.cache/ngc-builder/packages].")
