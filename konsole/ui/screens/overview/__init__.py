"""The Overview mode: the dashboard (``screen``), its panels as text (``panels``, ``text``).

Nothing is imported here: the app imports the screen module for the first paint, and the
panel modules stay plain rich-text builders tested without an app.
"""
