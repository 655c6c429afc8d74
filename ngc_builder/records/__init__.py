"""What a run leaves: the release record, the archive, the support matrix and the release notes."""
