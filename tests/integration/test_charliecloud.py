"""The CI release's JAX image validated under Debian's real Charliecloud (`validate IMAGE
--runtime charliecloud`): ch-convert from the engine, ch-run unprivileged, read-only, with the
image's ENV and without its entrypoint. One conversion (about 30 s) serves every assertion."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import ReleaseRun, cli

pytestmark = pytest.mark.integration
SCRATCH = "ngc-charliecloud-*"


@dataclass(frozen=True)
class ChValidation:
    done: subprocess.CompletedProcess[str]
    report: dict[str, Any]
    junit: Path
    left_behind: set[Path]

    def check(self, check_id: str) -> dict[str, Any]:
        found: dict[str, Any] = next(c for c in self.report["checks"] if c["id"] == check_id)
        return found


def scratch_folders() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob(SCRATCH))


@pytest.fixture(scope="module")
def validated(ci_release: ReleaseRun, tmp_path_factory: pytest.TempPathFactory) -> ChValidation:
    assert shutil.which("ch-run") and shutil.which("ch-convert"), \
        "Charliecloud is missing: ci/setup-host.sh installs it"
    out = tmp_path_factory.mktemp("charliecloud")
    before = scratch_folders()
    image_id = ci_release.record["images"]["jax"]["build"]["image_id"]
    done = cli("validate", image_id, "--runtime", "charliecloud", "--release",
               str(ci_release.manifest), "--out", str(out), "--junit", str(out / "junit.xml"),
               "--json")
    report = json.loads(done.stdout) if done.stdout.startswith("{") else {}
    return ChValidation(done, report, out / "junit.xml", scratch_folders() - before)


def test_the_ci_image_passes_t0_to_t2_under_charliecloud(validated: ChValidation) -> None:
    assert validated.done.returncode == 0, (validated.done.stdout[-3000:],
                                            validated.done.stderr[-2000:])
    assert validated.report["verdict"] == "pass"
    tiers = {c["tier"] for c in validated.report["checks"] if c["status"] == "pass"}
    assert {"T0", "T2"} <= tiers
    for check in validated.report["checks"]:
        if check["tier"] in ("T0", "T2") and check["status"] == "skip":
            # A framework's devel checks skip outside a -devel image, and say where to go.
            assert check["id"] == "cuda.archs" or check["message"].startswith(
                ("no GPU", "requires gpu.", "not a devel image: ")), check
    driver = validated.check("gpu.driver")  # T1, on a machine without a GPU
    assert (driver["tier"], driver["status"], driver["message"]) == ("T1", "skip", "no GPU")
    assert validated.check("labels")["status"] == "pass"  # against the release's plan
    # As nobody, without the entrypoint: the ENV applied (--set-env), Open MPI launches, and
    # two JAX processes join one world.
    for check_id in ("image.environment", "multinode.mpirun", "jax.dist.multiprocess_cpu"):
        assert validated.check(check_id)["status"] == "pass", validated.check(check_id)
    assert "<testsuite" in validated.junit.read_text()


def test_it_ran_unprivileged_on_a_read_only_image(validated: ChValidation) -> None:
    user = validated.check("image.user")
    uid_gid = validated.report["environment"]["charliecloud"]["uid_gid"]
    assert user["status"] == "pass"
    assert user["evidence"]["uid_gid"] == uid_gid  # what `id` answers inside: os.getuid()
    assert not uid_gid.startswith("0:")  # the tests run as root; the image did not
    assert user["evidence"]["root_read_only"] is True  # / in the container's mountinfo
    assert validated.check("image.workdir")["status"] == "pass"


def test_the_entrypoint_did_not_run(validated: ChValidation) -> None:
    entry = validated.check("charliecloud.entrypoint")
    assert entry["status"] == "pass"
    assert entry["evidence"]["stderr"] == ""  # no banner: nothing ran before the command
    assert entry["evidence"]["image_entrypoint"][-1] == "ngc_runner.entry"
    assert validated.check("cuda.require")["status"] == "pass"  # ENV came in by --set-env


def test_the_converted_copy_is_removed(validated: ChValidation) -> None:
    assert validated.left_behind == set()


def test_a_hostile_image_name_is_refused_with_exit_2() -> None:
    done = cli("validate", "--runtime", "charliecloud", "--json", "--", "--rm=/")
    assert done.returncode == 2
    assert "is not an image name or ID" in done.stderr
    assert json.loads(done.stdout)["exit"] == 2
