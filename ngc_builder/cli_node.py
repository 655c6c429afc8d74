"""The commands a researcher or a job runs on a node: `check-host` (will this image run
here?) and `squashfs` (start it from its SquashFS); registered by cli.py."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ngc_builder.cli_options import JSON
from ngc_builder.commands.guard import guarded


@click.command("check-host", short_help="Will image REF run on this machine? (no layer pulled)")
@click.argument("ref", metavar="REF")
@JSON
@click.option("--key", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Refuse REF unless it is signed by this cosign public key (docs/signing.md).")
def check_host(ref: str, as_json: bool, key: Path | None) -> None:
    """Will image REF (registry/repo:tag or registry/repo@sha256:...) run on this machine?
    Reads its labels from the registry without pulling a layer; checks the NVIDIA driver,
    GPU architectures, the Docker engine's NVIDIA runtime and /dev/shm."""
    from ngc_builder.commands.check_host import CheckHostOptions, check_host_command
    options = CheckHostOptions(ref, as_json, key)
    sys.exit(guarded(lambda: check_host_command(options), options.as_json))


@click.command(short_help="Start image REF from its signed SquashFS with ch-run (cached).")
@click.argument("ref", metavar="REF")
@click.argument("command", nargs=-1, type=click.UNPROCESSED, metavar="[-- CMD...]")
@click.option("--key", type=click.Path(path_type=Path, dir_okay=False), required=True,
              help="The release's cosign public key: the image and its SquashFS must be "
                   "signed by it.")
@click.option("--cache-dir", "cache_dir", type=click.Path(path_type=Path, file_okay=False),
              default=None, help="Where SquashFS files are kept, by digest "
                                 "[default: $XDG_CACHE_HOME/ngc-builder/squashfs].")
def squashfs(ref: str, command: tuple[str, ...], key: Path, cache_dir: Path | None) -> None:
    """Fetch the SquashFS published beside image REF (registry/repo:tag or @sha256:...) for
    this host's platform, check its digest and signature, and keep it in the cache; then run
    CMD in it with ch-run (its exit status is this command's), or print its path without
    CMD (docs/squashfs.md)."""
    from ngc_builder.commands.squashfs import SquashfsOptions, squashfs_command
    options = SquashfsOptions(ref, key, cache_dir, command)
    sys.exit(guarded(lambda: squashfs_command(options)))
