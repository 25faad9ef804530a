"""store: konsole's operating history in SQLite (every poll, every event, retention).

Knows nothing of Textual or of the wire protocol's internals; it speaks its own row types.
Not built yet: the package exists so the layering is in place from the start.
"""
