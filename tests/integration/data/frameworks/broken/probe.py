"""Never runs: the layer above it fails to build."""

IMPORT_NAME = "broken"


def register(suite: object) -> None:
    """No checks: the image must never get this far."""
