"""konsole: an operations and monitoring console for Apache Fluss clusters."""

__version__ = "0.1.0"
