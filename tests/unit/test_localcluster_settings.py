"""Settings every local cluster starts with (``KONSOLE_CLUSTER_SET``), before its own."""

from __future__ import annotations

import pytest

from konsole.localcluster.cluster import BASE_SETTINGS_VAR, base_settings


def test_base_settings_are_the_variables_words(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BASE_SETTINGS_VAR, " ts:a.b=1   c=2 ")
    assert base_settings() == ["ts:a.b=1", "c=2"]
    monkeypatch.setenv(BASE_SETTINGS_VAR, "")
    assert base_settings() == []
    monkeypatch.delenv(BASE_SETTINGS_VAR)
    assert base_settings() == []


def test_the_suite_raises_the_write_limit_for_its_clusters() -> None:
    """tests/conftest.py: a machine disk 75% full must not make every test server warn."""
    import os

    assert "ts:server.data-disk.write-limit-ratio=0.99" in os.environ[BASE_SETTINGS_VAR].split()
