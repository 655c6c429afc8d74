"""Stage 5, validate: the runner inside an image or against a host environment, T1 preflight, T3
baselines, JUnit."""
