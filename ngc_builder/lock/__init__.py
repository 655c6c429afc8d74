"""Lock (stage 2b): every package an image installs, resolved once, with exact files and
hashes (`models.py` the format, `pip.py` and `apt.py` the resolvers, `stale.py` the check)."""
