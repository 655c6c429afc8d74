"""`ngc-builder squashfs`: a node starts an image from its SquashFS only when the artifact is
that image's and both are signed by the release's key; the file is downloaded once, and a
cache another user could plant files in is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from ngc_builder.commands.guard import EXIT_FAILED, EXIT_INPUT, EXIT_OK, guarded
from ngc_builder.commands.squashfs import SquashfsOptions, ch_run_argv, squashfs_command
from ngc_builder.publish.artifact import Layer, artifact_manifest
from ngc_builder.publish.cosign_keys import SigningKey
from ngc_builder.publish.signing import sign_image
from ngc_builder.publish.squashfs_artifact import LAYER_TYPE, SQUASHFS_TYPE, squashfs_tag
from ngc_builder.publish.tags import content_digest
from ngc_builder.services.registry import Manifest, RegistryError
from ngc_builder.services.remote_image import ImageRef
from tests.unit.fake_engine import StoringRegistry

pytestmark = pytest.mark.unit
REF = "localhost:5000/pytorch:26.12-py3"
OCI = "application/vnd.oci.image.manifest.v1+json"
SQUASH = b"hsqs" + b"\0" * 996  # the file a node runs
COMMAND = ("python", "-c", "import torch")


def key() -> SigningKey:
    return SigningKey(ec.generate_private_key(ec.SECP256R1()), "test")


def release(signer: SigningKey, workdir: str = "/workspace", subject: str | None = None,
            artifact_signer: SigningKey | None = None) -> StoringRegistry:
    """The image at REF, its SquashFS artifact and their signatures."""
    registry = StoringRegistry()
    config = registry.put_blob("pytorch", json.dumps({
        "os": "linux", "architecture": "amd64", "config": {"WorkingDir": workdir}}).encode())
    body = json.dumps({"schemaVersion": 2, "mediaType": OCI, "layers": [], "config": {
        "mediaType": "application/vnd.oci.image.config.v1+json", "digest": config,
        "size": 10}}).encode()
    image = Manifest(body, OCI, content_digest(body))
    registry.put_manifest("pytorch", "26.12-py3", image)
    blob = registry.put_blob("pytorch", SQUASH)
    about = Manifest(body, OCI, subject) if subject else image
    artifact = artifact_manifest(about, SQUASHFS_TYPE,
                                 Layer(LAYER_TYPE, blob, len(SQUASH), "pytorch.sqfs"))
    registry.put_manifest("pytorch", squashfs_tag(image.digest), artifact)
    sign_image(registry, "pytorch", image.digest, signer)
    sign_image(registry, "pytorch", artifact.digest, artifact_signer or signer)
    return registry


def start(tmp_path: Path, registry: StoringRegistry, signer: SigningKey,
          command: tuple[str, ...] = COMMAND) -> tuple[int, list[list[str]]]:
    public = tmp_path / "cosign.pub"
    public.write_text(signer.public_pem)
    ran: list[list[str]] = []

    def runner(argv: list[str], environment: dict[str, str]) -> int:
        ran.append(argv)
        assert environment["USER"]  # ch-run refuses to start without it
        return 7  # the command's own status is the command's

    def registry_for(ref: ImageRef) -> StoringRegistry:
        assert ref.host == "localhost:5000"
        return registry

    options = SquashfsOptions(REF, public, tmp_path / "cache", command)
    return guarded(lambda: squashfs_command(options, registry_for, runner)), ran


def test_the_image_starts_from_its_squashfs_downloaded_once(tmp_path: Path) -> None:
    signer = key()
    registry = release(signer)
    for _ in range(2):
        status, ran = start(tmp_path, registry, signer)
        assert status == 7
        [argv] = ran
        path = Path(argv[4])
        assert argv == ch_run_argv(path, "/workspace", list(COMMAND))
        assert path.parent == tmp_path / "cache" and path.read_bytes() == SQUASH
        assert path.name == content_digest(SQUASH).removeprefix("sha256:") + ".sqfs"
    assert registry.downloads == 1
    assert (tmp_path / "cache").stat().st_mode & 0o777 == 0o700


def test_without_a_command_the_path_is_printed(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    signer = key()
    status, ran = start(tmp_path, release(signer), signer, command=())
    assert status == EXIT_OK and ran == []
    assert Path(capsys.readouterr().out.strip()).read_bytes() == SQUASH


@pytest.mark.parametrize(("case", "said"), [
    ("artifact-by-another-key", "its SquashFS (sha256:"),
    ("image-by-another-key", "the image (sha256:"),
    ("artifact-of-another-image", "SquashFS subject is sha256:bbbb"),
])
def test_a_squashfs_that_is_not_the_releases_is_never_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, said: str) -> None:
    signer, stranger = key(), key()
    registry = {
        "artifact-by-another-key": lambda: release(signer, artifact_signer=stranger),
        "image-by-another-key": lambda: release(stranger, artifact_signer=signer),
        "artifact-of-another-image": lambda: release(signer, subject="sha256:" + "bb" * 32),
    }[case]()
    status, ran = start(tmp_path, registry, signer)
    error = capsys.readouterr().err
    assert status == EXIT_FAILED and ran == [] and registry.downloads == 0
    assert error.startswith(f"error: {REF}: ") and said in error and error.count("\n") == 1
    assert not any((tmp_path / "cache").iterdir())


def test_a_cache_others_could_plant_files_in_is_refused(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    signer = key()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "cache").symlink_to(tmp_path / "elsewhere")
    assert start(tmp_path, release(signer), signer)[0] == EXIT_INPUT
    assert "--cache-dir: a symbolic link: not trusted" in capsys.readouterr().err
    (tmp_path / "cache").unlink()
    (tmp_path / "cache").mkdir(mode=0o777)
    (tmp_path / "cache").chmod(0o777)
    assert start(tmp_path, release(signer), signer)[0] == EXIT_INPUT
    assert "writable by others: not trusted" in capsys.readouterr().err


def test_a_file_planted_under_the_digests_name_is_replaced_not_run(tmp_path: Path) -> None:
    signer = key()
    registry = release(signer)
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    planted = cache / (content_digest(SQUASH).removeprefix("sha256:") + ".sqfs")
    planted.write_bytes(b"something else")  # another size than the descriptor's
    assert start(tmp_path, registry, signer)[0] == 7
    assert planted.read_bytes() == SQUASH and registry.downloads == 1


def test_a_failed_download_leaves_no_partial_file(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    signer = key()
    registry = release(signer)

    def cut(name: str, digest: str, size: int, target: Path) -> None:
        target.write_bytes(SQUASH[:10])
        raise RegistryError(f"https://localhost:5000/v2/{name}/blobs/{digest}: cut short")

    registry.download_blob = cut  # type: ignore[method-assign]
    assert start(tmp_path, registry, signer)[0] == EXIT_FAILED
    assert "cut short" in capsys.readouterr().err
    assert list((tmp_path / "cache").iterdir()) == []


@pytest.mark.parametrize("workdir", ["-x", "relative", "/a\n/b", ""])
def test_a_hostile_workdir_becomes_the_root(workdir: str) -> None:
    argv = ch_run_argv(Path("/c/x.sqfs"), workdir, ["true"])
    assert argv[3] == "--cd=/" and argv[4:] == ["/c/x.sqfs", "--", "true"]
