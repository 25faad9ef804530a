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

Bad values are a :class:`~konsole.errors.ProfileError` naming the file and key (exit 3);
URLs are checked by :func:`konsole.collect.alertmanager.alerts_endpoint`.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

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
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return AlertConfig()
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ProfileError(f"cannot read: {exc}", path=path) from None
    body = data.get("alerts")
    if body is None:
        return AlertConfig()
    if not isinstance(body, dict):
        raise ProfileError("must be a table", path=path, key="alerts")
    return _parse(body, path)


def _parse(body: dict[str, Any], path: Path) -> AlertConfig:
    values: dict[str, Any] = {}
    for key, value in body.items():
        if key == "alertmanager":
            urls = [value] if isinstance(value, str) else value
            if not isinstance(urls, list) or not all(isinstance(u, str) for u in urls):
                raise ProfileError(
                    "must be a URL or a list of URLs", path=path, key=f"alerts.{key}"
                )
            values["urls"] = tuple(urls)
        elif key in _SECONDS:
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ProfileError(
                    "must be a number of seconds >= 0", path=path, key=f"alerts.{key}"
                )
            values[_SECONDS[key]] = float(value)
        else:
            raise ProfileError("unknown key", path=path, key=f"alerts.{key}")
    if values.get("resend_s") == 0:
        raise ProfileError("must be more than 0 seconds", path=path, key="alerts.resend")
    return AlertConfig(**values)
