#!/usr/bin/python3
"""Decode Confluent-framed FirstCauseAlert records with Debian's python3-avro
(an implementation independent of stormwatch's codec) and print one JSON
line per record: the datum as the schema reads it.

Usage: alert_decode.py SCHEMA.avsc IN.bin
IN holds one record per message: a 4-byte big-endian length, then the
message (magic byte 0, 4-byte big-endian schema id, Avro body). Exits 1
naming the record when one does not decode or leaves bytes over.
"""
import io
import json
import struct
import sys

import avro.io
import avro.schema


def main():
    schema = avro.schema.parse(open(sys.argv[1]).read())
    reader = avro.io.DatumReader(schema)
    data = open(sys.argv[2], "rb").read()
    off, i = 0, 0
    while off < len(data):
        (n,) = struct.unpack(">I", data[off:off + 4])
        msg = data[off + 4:off + 4 + n]
        off += 4 + n
        if len(msg) < 5 or msg[0] != 0:
            sys.exit("record %d: no Confluent header" % i)
        body = io.BytesIO(msg[5:])
        try:
            d = reader.read(avro.io.BinaryDecoder(body))
        except Exception as e:  # the reader's own error, named
            sys.exit("record %d: %s" % (i, e))
        if body.tell() != len(msg) - 5:
            sys.exit("record %d: %d bytes left over" % (i, len(msg) - 5 - body.tell()))
        print(json.dumps(d, sort_keys=True))
        i += 1


if __name__ == "__main__":
    main()
