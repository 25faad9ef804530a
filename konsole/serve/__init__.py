"""``konsole serve``, a face like the console and the command line: many clusters polled
in one process, their Prometheus exposition and their alerts to Alertmanager."""
