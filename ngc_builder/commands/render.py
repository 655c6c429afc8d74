"""`ngc-builder render MANIFEST --out DIR`: one folder per image with its Dockerfile and build
context, byte-identical for the same input."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ngc_builder.commands.guard import EXIT_OK
from ngc_builder.errors import InputError, Problem
from ngc_builder.pipeline.prepare import prepare
from ngc_builder.render.contexts import write_all


@dataclass(frozen=True)
class RenderOptions:
    manifest: Path
    out: Path
    root: Path | None = None
    offline: bool = False
    as_json: bool = False
    one_install_layer: bool = False


def render_command(options: RenderOptions) -> int:
    prepared = prepare(options.manifest, options.root, stack_check=not options.offline,
                       split=not options.one_install_layer)
    try:
        written = [str(path) for path in write_all(prepared.rendered, options.out)]
    except OSError as exc:
        raise InputError([Problem(str(options.out), 1, "--out", exc.strerror or str(exc))]
                         ) from None
    if options.as_json:
        print(json.dumps({"written": written}))
    else:
        for folder in written:
            print(f"wrote {folder}/Dockerfile")
    return EXIT_OK
