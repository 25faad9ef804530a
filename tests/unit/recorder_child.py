"""A recorder process on a fake poll source, for the crash and concurrent-reader tests.

Usage: python -m tests.unit.recorder_child PATH [START_SEQ]. Prints ``committed POLL_ID SEQ``
(flushed) after each committed poll; polls as fast as it can, for at most 60 s.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from tests._testutil.builders import T0, snap, table, view
from tests._testutil.judging import JudgingRecorder


def main() -> None:
    path = Path(sys.argv[1])
    seq = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    recorder = JudgingRecorder(
        path,
        say=lambda s: print("say", s, flush=True),
        on_commit=lambda snap, poll_id: print(f"committed {poll_id} {snap.seq}", flush=True),
        retention_every_s=0.5,
        clock=lambda: T0 + seq,  # retention sees the fake polls as fresh
    )
    recorder.open()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        n = seq
        tables = [table(f"db.t{i}", i + 1, [n * (i + 1), n, n + i, 0]) for i in range(20)]
        if seq % 7 == 0:
            tables.append(table("db.sometimes", 99, [n]))  # created and dropped: new layouts
        recorder.record(snap(view((1, 2, 3) if seq % 5 else (1, 2), tables), seq=seq, t=T0 + seq))
        seq += 1


if __name__ == "__main__":
    main()
