"""Alert settings of ``konsole serve``: the config file's ``[alerts]`` table and the
command line's ``--alertmanager`` / ``--alert-*`` options over it.

```toml
[alerts]
alertmanager = ["http://am-1:9093", "http://am-2:9093"]   # or one string
for = 30          # seconds a finding holds before its alert fires
keep_firing = 30  # seconds a firing alert outlives its finding (flap hold-down)
resend = 30       # seconds between re-sends of active alerts (< resolve_timeout)
event_hold = 300  # seconds an event alert (coordinator failover) stays active
```

Bad values are a :class:`~konsole.errors.ProfileError` naming the file, the line and the
key (exit 3); URLs are checked by :func:`konsole.serve.alerts.delivery.alerts_endpoint` as
the file is read.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from konsole.collect.profiles import KeyLocator
from konsole.errors import ProfileError
from konsole.model.alerts import AlertSettings

__all__ = ["AlertConfig", "load_alert_config"]

#: ``[alerts]`` key -> the AlertConfig field it sets (seconds, >= 0).
_SECONDS: Final = {
    "for": "for_s",
    "keep_firing": "keep_firing_s",
    "resend": "resend_s",
    "event_hold": "event_hold_s",
}


_DEFAULTS: Final = AlertSettings()


@dataclass(frozen=True, slots=True)
class AlertConfig:
    urls: tuple[str, ...] = ()
    for_s: float = _DEFAULTS.for_s
    keep_firing_s: float = _DEFAULTS.keep_firing_s
    event_hold_s: float = _DEFAULTS.event_hold_s
    resend_s: float = 30.0

    @property
    def settings(self) -> AlertSettings:
        return AlertSettings(self.for_s, self.keep_firing_s, self.event_hold_s)


def load_alert_config(path: Path) -> AlertConfig:
    """The ``[alerts]`` table of ``path`` (defaults when the file or the table is absent)."""
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except FileNotFoundError:
        return AlertConfig()
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ProfileError(f"cannot read: {exc}", path=path) from None
    body = data.get("alerts")
    if body is None:
        return AlertConfig()
    locate = KeyLocator(text.splitlines(), path)
    if not isinstance(body, dict):
        raise locate.error("must be a table", (), "alerts")
    return _parse(body, locate)


def _parse(body: dict[str, Any], locate: KeyLocator) -> AlertConfig:
    from konsole.serve.alerts.delivery import AlertmanagerUrlError, alerts_endpoint

    values: dict[str, Any] = {}
    for key, value in body.items():
        if key == "alertmanager":
            urls = [value] if isinstance(value, str) else value
            if not isinstance(urls, list) or not all(isinstance(u, str) for u in urls):
                raise locate.error("must be a URL or a list of URLs", ("alerts",), key)
            for url in urls:
                try:
                    alerts_endpoint(url)
                except AlertmanagerUrlError as exc:
                    raise locate.error(str(exc), ("alerts",), key) from None
            values["urls"] = tuple(urls)
        elif key in _SECONDS:
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise locate.error("must be a number of seconds >= 0", ("alerts",), key)
            values[_SECONDS[key]] = float(value)
        else:
            raise locate.error("unknown key", ("alerts",), key)
    if values.get("resend_s") == 0:
        raise locate.error("must be more than 0 seconds", ("alerts",), "resend")
    return AlertConfig(**values)
