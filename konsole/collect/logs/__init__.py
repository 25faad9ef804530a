"""Server logs: where a server's lines come from, reading them bounded, and the
excerpts and evidence kept beside events."""
