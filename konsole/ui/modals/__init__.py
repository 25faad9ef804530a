"""The console's modal screens: help, time travel, export."""
