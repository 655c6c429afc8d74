"""The whole release run behind `ngc-builder release` (commands/release.py): prepared, run
through `pipeline/flow.py`, summed up; a run that published every selected image leaves the
memo a no-op re-run is answered from."""

from __future__ import annotations

import json

from ngc_builder.commands.guard import EXIT_FAILED, EXIT_OK
from ngc_builder.manifest.paths import default_root
from ngc_builder.manifest.site import load_site
from ngc_builder.pipeline import noop
from ngc_builder.pipeline.console import print_summary
from ngc_builder.pipeline.flow import Host, ReleaseOptions, release_flow
from ngc_builder.pipeline.interrupt import stop_signals_raise
from ngc_builder.pipeline.prepare import prepare, registry_option
from ngc_builder.records.record import ImageRecord, ReleaseRecord, record_path
from ngc_builder.services.registry import Registry


def whole_run(options: ReleaseOptions, host: Host | None, registry: Registry | None,
              inputs: str | None) -> int:
    """`inputs`: the fingerprint taken before the run, when it may leave a memo."""
    with stop_signals_raise():
        # The site file is input like the manifest: refused before the stack check asks the
        # index anything and before a context is written.
        load_site(options.site, options.root or default_root(options.manifest))
        prepared = prepare(options.manifest, options.root, only=options.only,
                           registry=registry or registry_option(options.registry),
                           stack_check=options.stack_check)
        record = release_flow(options, prepared, host or Host())
    if record is None:
        return EXIT_FAILED
    selected = [record.images[i.name] for i in prepared.plan.select(options.only)
                if i.name in record.images]
    _summary(record, selected, options.as_json)
    if any(image.breaks_the_run for image in selected):
        return EXIT_FAILED
    if inputs is not None and all(_published(image) for image in selected):
        noop.remember(options, inputs, prepared.plan.registry,
                      record_path(options.build_dir, prepared.plan.release))
    return EXIT_OK


def _published(image: ImageRecord) -> bool:
    """Pushed and promoted, or an expected failure (recorded, never pushed)."""
    return image.push.status == "ok" or image.outcome == "xfail"


def _summary(record: ReleaseRecord, selected: list[ImageRecord], as_json: bool) -> None:
    if as_json:
        print(json.dumps(record.model_dump(mode="json"), indent=2))
    else:
        print_summary(record, selected)
