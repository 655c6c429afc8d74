"""The package cache on the build host: wheels and .debs downloaded once, by the host (with
its proxy and CA settings), kept by content hash and served to builds over plain HTTP."""
