"""The Capacity mode: the screen (``screen``) and its rows and words (``cells``, no Textual).

The Servers screen borrows the room cell from ``cells``, so the room left before a write lock
reads the same in both.
"""
