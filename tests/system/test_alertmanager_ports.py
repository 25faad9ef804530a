"""The tests' Alertmanager pair (tests/_testutil/alertmanager.py) starts when a port it was
given is taken before its bind: rehearsal r26 lost three alert-cause tests to a gossip port
chosen before a Fluss cluster's start and taken by the time Alertmanager bound it."""

from __future__ import annotations

import socket
from pathlib import Path

from tests._testutil.alertmanager import Webhook, pair, wait_for
from tests._testutil.system_tools import need_binary


def _listening(port: int) -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", port))
    sock.listen()
    return sock


def test_a_pair_whose_ports_were_taken_starts_on_fresh_ones_and_gossips(tmp_path: Path) -> None:
    hook = Webhook().start()
    first, second = pair(need_binary("prometheus-alertmanager"), tmp_path, hook.url, "")
    taken_gossip, taken_web = first.gossip_port, second.port
    assert taken_gossip is not None
    holders = [_listening(taken_gossip), _listening(taken_web)]
    try:
        first.start()
        second.start()
        assert first.gossip_port != taken_gossip and second.port != taken_web
        log = (tmp_path / "am-1" / "alertmanager.log").read_text()
        assert "address already in use" in log  # the first try did meet the taken port
        assert wait_for(lambda: first.cluster_peers() == second.cluster_peers() == 2, 20)
    finally:
        for sock in holders:
            sock.close()
        second.stop()
        first.stop()
        hook.stop()
