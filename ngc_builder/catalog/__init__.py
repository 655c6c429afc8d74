"""The catalog stage: a static site (no server) researchers use to choose an image of a
release: `source` reads the archive (and the release record), `extract` makes the typed
catalog (`model`), `render` writes the HTML."""
