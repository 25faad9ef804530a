"""The servers' screens: the Servers mode (``screen``) and one server's detail (``detail``)."""
