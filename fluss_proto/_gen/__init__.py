"""Python modules generated from ``fluss_proto/proto/*.proto``.

Do not edit by hand: run ``python fluss_proto/gen_proto.py`` after changing a .proto file.
"""
