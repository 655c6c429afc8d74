"""Stage 2, plan: the release as a DAG of images and the registry it is published to; CI pipelines
generated from it."""
