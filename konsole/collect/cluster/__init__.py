"""What konsole reads from a Fluss cluster: the poller, its metrics scrape, capacity
and storage parts, and the reads a face asks for (tables' rows, the upgrade notes' facts)."""
