"""Names an image or an engine gives are held to the manifest's rules before they become a
folder, a path in a job script or an argument: a framework label of `../../evil` (a folder
outside frameworks/ whose probe.py the job would stage and run), and an engine tag of
`--tmp=/x` (an option of ch-convert). Each attack is made through a fake engine answering
it; each is refused in one line naming the image and the label or tag, exit 2, nothing
staged, submitted or run."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest

from ngc_builder.commands.guard import EXIT_INPUT, guarded
from ngc_builder.commands.validate import (
    ValidateImageOptions,
    _lineage,
    validate_image_command,
    validate_slurm_command,
)
from ngc_builder.errors import InputError
from ngc_builder.services.engine import Engine
from ngc_builder.services.reference import reference_problem
from ngc_builder.services.slurm import JobState
from ngc_builder.validate.chrun import is_reference
from ngc_builder.validate.node import framework_folder
from tests.unit.fake_engine import FakeClient, FakeEngine
from tests.unit.validate.test_charliecloud import IMAGE_ID, FakeProcesses, command
from tests.unit.validate.test_slurm import FakeSlurm, passing_node

pytestmark = pytest.mark.unit
EVIL_PROBE = "def register(suite):\n    raise SystemExit('ran')\n"
HOSTILE_LABELS = ["../../evil", "/tmp/evil", "..", "jax/../../evil", "-x", "Jax", "a" * 600]


def project(tmp_path: Path) -> tuple[Path, Path]:
    """A checkout with frameworks/tiny, a folder `evil` beside it holding a probe.py, and a
    site file whose runtime stages probes from the checkout (host)."""
    root = tmp_path / "root"
    tiny = root / "frameworks" / "tiny"
    tiny.mkdir(parents=True)
    (tiny / "framework.yaml").write_text("name: tiny\nimport_name: json\n")
    (tiny / "probe.py").write_text("IMPORT_NAME = 'json'\n")
    evil = tmp_path / "evil"  # where `../../evil` leads from frameworks/
    evil.mkdir()
    (evil / "framework.yaml").write_text("name: evil\nimport_name: json\n")
    (evil / "probe.py").write_text(EVIL_PROBE)
    site_file = tmp_path / "site.yaml"
    site_file.write_text("slurm:\n  gpus: 0\n  runtime: host\n  poll_seconds: 0.001\n")
    return root, site_file


def slurm_run(tmp_path: Path, labels: dict[str, str], cluster: FakeSlurm,
              capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """`validate sha256:abc --slurm` (runtime host) of a local image with `labels`: its exit
    code and what it said on stderr."""
    root, site_file = project(tmp_path)
    engine = FakeEngine()
    engine.images["sha256:abc"] = {"name": "x", "labels": labels}
    options = ValidateImageOptions("sha256:abc", slurm=True, site=site_file, root=root,
                                   out=tmp_path / "out")
    code = guarded(lambda: validate_slurm_command(options, cluster, FakeClient(engine)))
    return code, capsys.readouterr().err


@pytest.mark.parametrize("label", HOSTILE_LABELS)
def test_a_framework_label_that_is_no_framework_name_stages_and_runs_nothing(
    tmp_path: Path, label: str, capsys: pytest.CaptureFixture[str],
) -> None:
    cluster = FakeSlurm([JobState("COMPLETED")], passing_node())
    code, said = slurm_run(tmp_path, {"org.ngc-builder.framework": label,
                                      "org.ngc-builder.stack": "cu13"}, cluster, capsys)
    assert code == EXIT_INPUT
    why = (f"a name of {len(label)} characters (the limit is 512)" if len(label) > 512
           else f"{label!r} is not a valid name (lower-case a-z 0-9 . _ -)")
    assert said.splitlines() == [f"sha256:abc:1: org.ngc-builder.framework: the image's "
                                 f"label: {why}; it names no folder of frameworks/"]
    assert cluster.script == "" and cluster.options == []  # nothing submitted
    assert not (tmp_path / "out").exists()  # no job folder, nothing staged


def test_a_framework_label_that_is_a_framework_name_is_staged_from_frameworks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    cluster = FakeSlurm([JobState("COMPLETED")], passing_node())
    code, _ = slurm_run(tmp_path, {"org.ngc-builder.framework": "tiny"}, cluster, capsys)
    assert code == 0
    probes = Path(cluster.script.split("--probes-dir ", 1)[1].split()[0])
    assert (probes / "tiny" / "probe.py").read_text() == "IMPORT_NAME = 'json'\n"


HOSTILE_TAGS = ["--tmp=/x", "-v", "localhost:5000/jax:--tmp=/x", "jax:1 --tmp=/x", "../x:1",
                "jax:1\n--tmp=/x", "jax:$(id)", "x" * 600]


@pytest.mark.parametrize("tag", HOSTILE_TAGS)
def test_an_engine_tag_that_is_no_image_name_never_reaches_ch_convert(
    tmp_path: Path, tag: str, capsys: pytest.CaptureFixture[str],
) -> None:
    """The image is named by its ID: ch-convert would get the engine's first tag."""
    processes = FakeProcesses()
    assert command(IMAGE_ID, tmp_path, processes, tags=[tag], as_json=False) == EXIT_INPUT
    said = capsys.readouterr().err.splitlines()
    assert len(said) == 1 and said[0].startswith(f"{IMAGE_ID}:1: RepoTags: the engine's tag ")
    assert said[0].endswith("; not handed to ch-convert")
    assert processes.calls == []  # nothing converted, nothing run
    assert not (tmp_path / "out").exists()


def test_an_engine_tag_that_is_an_image_name_is_converted(tmp_path: Path) -> None:
    processes = FakeProcesses()
    assert command(IMAGE_ID, tmp_path, processes, tags=["localhost:5000/jax:26.12-py3"]) == 0
    assert processes.calls[0][1][-2] == "localhost:5000/jax:26.12-py3"


@pytest.mark.parametrize("name", ["localhost:5000/jax:26.12-py3", "jax", "ngc-local/jax:1",
                                  "reg.example.com/a/b@sha256:" + "a" * 64])
def test_the_engines_own_names_follow_dockers_grammar(name: str) -> None:
    assert reference_problem(name) is None and is_reference(name)


@pytest.mark.parametrize("name", HOSTILE_TAGS)
def test_one_rule_refuses_them_for_a_person_and_for_an_engine(name: str) -> None:
    assert reference_problem(name) is not None and not is_reference(name)


@pytest.mark.parametrize("given", ["img\nok: verified", "--rm", "a b"])
def test_a_reference_that_names_no_image_is_refused_before_the_engine_is_asked(
        given: str) -> None:
    """Not the engine's 404 (exit 1, a second line forged by the newline): exit 2, one line,
    and no engine is even connected."""
    code = guarded(lambda: validate_image_command(ValidateImageOptions(ref=given),
                                                  cast(Engine, Untouchable())))
    assert code == EXIT_INPUT


class Untouchable:
    """An engine that must not be asked anything."""

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"the engine was asked for {name}")


@pytest.mark.parametrize("label", HOSTILE_LABELS)
def test_an_image_label_naming_the_baselines_is_held_to_the_name_rule(label: str) -> None:
    """`org.ngc-builder.image` keys the report and the T3 baselines book: the image's say."""
    with pytest.raises(InputError, match=r"org\.ngc-builder\.image: the image's label: "):
        _lineage("img:1", {"org.ngc-builder.image": label}, "img_1")
    assert _lineage("img:1", {"org.ngc-builder.image": "jax"}, "img_1") == "jax"
    assert _lineage("img:1", {}, "img_1") == "img"


@pytest.mark.parametrize("name", ["../x", "/tmp/x", "..", "Jax", "-x"])
def test_a_framework_named_on_a_gpu_node_is_held_to_the_name_rule(tmp_path: Path,
                                                                 name: str) -> None:
    """`validate --host --framework NAME` stages frameworks/NAME's probes: never another
    folder's, even where one with a framework.yaml is there to be found."""
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "framework.yaml").write_text("name: x\n")
    with pytest.raises(InputError, match="is not a valid name"):
        framework_folder(tmp_path / "root", name)
