"""`ngc-builder release MANIFEST`: check -> plan -> render -> build -> validate -> push ->
promote (`pipeline/flow.py`), with a record and a summary table."""

from __future__ import annotations

import json

from ngc_builder.commands.guard import EXIT_FAILED, EXIT_OK
from ngc_builder.pipeline.console import print_summary
from ngc_builder.pipeline.flow import Host, ReleaseOptions, release_flow
from ngc_builder.pipeline.interrupt import stop_signals_raise
from ngc_builder.pipeline.prepare import prepare, registry_option
from ngc_builder.records.record import ImageRecord, ReleaseRecord
from ngc_builder.services.registry import Registry

__all__ = ["Host", "ReleaseOptions", "release_command"]


THIS_HOST = Host()


def release_command(options: ReleaseOptions, host: Host = THIS_HOST,
                    registry: Registry | None = None) -> int:
    """`registry`: where to publish (default: --registry, else the manifest's)."""
    with stop_signals_raise():
        prepared = prepare(options.manifest, options.root, only=options.only,
                           registry=registry or registry_option(options.registry),
                           stack_check=options.stack_check)
        record = release_flow(options, prepared, host)
    if record is None:
        return EXIT_FAILED
    selected = [record.images[i.name] for i in prepared.plan.select(options.only)
                if i.name in record.images]
    _summary(record, selected, options.as_json)
    return EXIT_FAILED if any(image.breaks_the_run for image in selected) else EXIT_OK


def _summary(record: ReleaseRecord, selected: list[ImageRecord], as_json: bool) -> None:
    if as_json:
        print(json.dumps(record.model_dump(mode="json"), indent=2))
    else:
        print_summary(record, selected)
