"""The Events mode (``screen``), one event's evidence (``evidence``), and the timeline entries
and subject links both of them show (``timeline``).
"""
