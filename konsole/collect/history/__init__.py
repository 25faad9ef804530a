"""What konsole keeps in and reads from a history file: the recorder (the one writer),
following another writer, taking over, and every question a face asks of the history."""
