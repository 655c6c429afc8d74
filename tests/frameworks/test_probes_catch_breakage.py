"""Every framework image of a finished release, broken on purpose inside a throwaway
container: its checks must fail, never pass. Run by `make test-frameworks` (it needs the
images that target builds); skipped when no such release record exists."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO

RECORD = Path(os.environ.get("NGC_FRAMEWORKS_RECORD",
                             REPO / "build" / "test-frameworks" / "26.11" / "release.json"))


def passed_framework_images() -> list[tuple[str, str]]:
    if not RECORD.exists():
        return []
    images = json.loads(RECORD.read_text())["images"].values()
    return [(image["name"], image["build"]["image_id"]) for image in images
            if image["kind"] == "framework" and image["validation"].get("verdict") == "pass"]


IMAGES = passed_framework_images()
pytestmark = [pytest.mark.frameworks,
              pytest.mark.skipif(not IMAGES, reason=f"no passed framework images in {RECORD}")]


# Inside the image: an image with a CUDA stack loses cuDNN (else its CUDA runtime), one
# without loses the framework's own package directory.
BREAK_SCRIPT = """\
import glob, importlib.util, json, os, shutil, subprocess
expect = {}
for name in sorted(glob.glob('/opt/ngc/expect/*.json')):
    expect.update(json.load(open(name)))
library = 'cudnn' if 'cudnn' in expect.get('libraries', {}) else 'cudart'
if expect.get('libraries'):
    found = glob.glob(f'/opt/venv/**/lib{library}.so.*', recursive=True)
    for lib in {os.path.realpath(path) for path in found}:  # lib64 links to lib
        os.remove(lib)
    subprocess.run(['ldconfig'], check=True)
else:
    root = (expect.get('import_name') or '').split('.')[0]
    shutil.rmtree(os.path.dirname(importlib.util.find_spec(root).origin))
"""


def run_broken(image_id: str, breakage: str) -> dict[str, Any]:
    """Break the container first (shell), then run the runner in it; parse its report."""
    done = subprocess.run(
        ["docker", "run", "--rm", "--network", "none", "--shm-size", "2g", "--entrypoint", "bash",
         image_id, "-c",
         f"set -e\n{breakage}\nexec python -m ngc_runner"],
        capture_output=True, text=True, check=False, timeout=900)
    report: dict[str, Any] = json.loads(done.stdout)
    assert done.returncode == 1, report
    return report


def statuses(report: dict[str, Any]) -> dict[str, str]:
    return {check["id"]: check["status"] for check in report["checks"]}


@pytest.mark.parametrize("name,image_id", IMAGES, ids=[name for name, _ in IMAGES])
def test_a_wrong_version_fails(name: str, image_id: str) -> None:
    overlay = "echo '{\"version\": \"0.0.1\"}' > /opt/ngc/expect/99-wrong-version.json"
    found = statuses(run_broken(image_id, overlay))
    assert found["framework.version"] == "fail"


@pytest.mark.parametrize("name,image_id", IMAGES, ids=[name for name, _ in IMAGES])
def test_a_missing_library_or_module_fails(name: str, image_id: str) -> None:
    breakage = f"python - <<'PY'\n{BREAK_SCRIPT}PY\n"
    report = run_broken(image_id, breakage)
    failed = [cid for cid, status in statuses(report).items() if status == "fail"]
    assert any(cid.startswith(("lib.", "stack.", "framework.")) for cid in failed), failed


GPU_IMAGES = [(name, image_id) for name, image_id in IMAGES
              if name in {"pytorch", "jax", "tensorflow", "caffe2"}]


@pytest.mark.parametrize("name,image_id", GPU_IMAGES, ids=[name for name, _ in GPU_IMAGES])
def test_a_gpu_target_the_build_lacks_fails_the_architecture_check(name: str,
                                                                   image_id: str) -> None:
    # Kepler (sm_35) is in no wheel of 26.11 except caffe2's; Blackwell Ultra (sm_103)
    # in none but torch's: ask each image for one it cannot have.
    target = "10.3" if name == "caffe2" else "3.5"
    overlay = f"echo '{{\"gpu_targets\": [\"{target}\"]}}' > /opt/ngc/expect/99-target.json"
    report = run_broken(image_id, overlay)
    archs = next(c for c in report["checks"] if c["id"] == "cuda.archs")
    assert archs["status"] == "fail", archs
    assert f"sm_{target.replace('.', '')}" in archs["message"]


ARCH_SCRIPT = """\
import json, os, torch
from ngc_runner.archs import scan_library
lib = os.path.join(os.path.dirname(torch.__file__), 'lib', 'libtorch_cuda.so')
code = scan_library(__import__('pathlib').Path(lib))
print(json.dumps({'torch': torch.cuda.get_arch_list(), 'sass': sorted(code.sass),
                  'ptx': sorted(code.ptx)}))
"""


@pytest.mark.parametrize("name,image_id", [i for i in IMAGES if i[0] == "pytorch"])
def test_the_fat_binary_reader_agrees_with_torchs_own_arch_list(name: str, image_id: str) -> None:
    done = subprocess.run(["docker", "run", "--rm", "--network", "none", image_id, "python",
                           "-c", ARCH_SCRIPT], capture_output=True, text=True, check=True)
    found = json.loads(done.stdout)
    expected = {int(arch.split("_")[1]) for arch in found["torch"] if arch.startswith("sm_")}
    assert expected and expected <= set(found["sass"])
    assert {int(a.split("_")[1]) for a in found["torch"] if a.startswith("compute_")} <= set(
        found["ptx"])
