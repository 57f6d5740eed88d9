#!/usr/bin/python3
"""Encode TelemetryEvent JSON Lines as Confluent-framed Avro with Debian's
python3-avro (an implementation independent of stormwatch's codec), cycling
through writer schemas: line i uses the (i mod k)-th --schema ID=FILE.

Usage: sr_encode.py --schema ID=FILE [--schema ...] IN.jsonl OUT.bin
OUT holds one record per message: a 4-byte big-endian length, then the
message (magic byte 0, 4-byte big-endian schema id, Avro body). A field the
line lacks is null; metadata is written as JSON text; phase_scope is null
(stormwatch then reads metadata.phase_scope); fields the line does not have
and the schema requires get the schema's default.
"""
import argparse
import io
import json
import struct
import sys

import avro.io
import avro.schema


def datum(schema, obj):
    out = {}
    for f in schema.fields:
        v = obj.get(f.name)
        if f.name == "metadata":
            v = None if v is None else json.dumps(v, separators=(",", ":"))
        elif f.name == "phase_scope":
            v = None
        if v is None and f.has_default:
            v = f.default
        out[f.name] = v
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--schema", action="append", required=True)
    ap.add_argument("inp")
    ap.add_argument("out")
    a = ap.parse_args()
    schemas = []
    for s in a.schema:
        sid, path = s.split("=", 1)
        with open(path) as f:
            schemas.append((int(sid), avro.schema.parse(f.read())))
    n = 0
    with open(a.inp) as fin, open(a.out, "wb") as fout:
        for line in fin:
            if not line.strip():
                continue
            sid, sch = schemas[n % len(schemas)]
            buf = io.BytesIO()
            buf.write(b"\0" + struct.pack(">I", sid))
            avro.io.DatumWriter(sch).write(datum(sch, json.loads(line)), avro.io.BinaryEncoder(buf))
            msg = buf.getvalue()
            fout.write(struct.pack(">I", len(msg)) + msg)
            n += 1
    print("%d messages" % n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
