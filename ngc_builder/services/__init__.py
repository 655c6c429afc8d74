"""Services the stages are handed: the Docker engine, the registry (credentials, TLS, retries),
stream reading."""
