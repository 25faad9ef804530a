"""Regenerate ``fluss_proto/_gen`` from ``fluss_proto/proto/*.proto``.

Usage::

    python fluss_proto/gen_proto.py            # rewrite fluss_proto/_gen in place
    python fluss_proto/gen_proto.py OUT_DIR    # write the modules somewhere else

It runs ``python -m grpc_tools.protoc`` with ``--python_out`` and ``--pyi_out`` and nothing
more: the output is committed exactly as protoc writes it. The generated code checks at
import time that the protobuf runtime is not older than the bundled protoc, so regenerate
with the grpcio-tools pinned in the dev environment.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
PROTO_DIR = PACKAGE_DIR / "proto"
GEN_DIR = PACKAGE_DIR / "_gen"


def proto_files() -> list[Path]:
    """The .proto sources, in a stable order."""
    return sorted(PROTO_DIR.glob("*.proto"))


def generate(out_dir: Path = GEN_DIR) -> list[Path]:
    """Compile every .proto into ``out_dir``; return the files protoc was asked to write."""
    protos = proto_files()
    if not protos:
        raise SystemExit(f"no .proto files under {PROTO_DIR}")
    out_dir.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "grpc_tools.protoc",
        f"--proto_path={PROTO_DIR}",
        f"--python_out={out_dir}",
        f"--pyi_out={out_dir}",
        *(p.name for p in protos),
    ]
    # Run from the proto directory so the file names recorded in the descriptors are bare.
    subprocess.run(cmd, cwd=PROTO_DIR, check=True)
    written = []
    for p in protos:
        for suffix in ("_pb2.py", "_pb2.pyi"):
            written.append(out_dir / f"{p.stem}{suffix}")
    return written


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) > 1:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = Path(args[0]) if args else GEN_DIR
    for path in generate(out_dir):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
