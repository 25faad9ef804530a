"""Alerts to Alertmanager: the settings, the delivery, and the deliveries as metrics."""
