#!/usr/bin/env python3
"""A stand-in for the Confluent Schema Registry in the tests (no registry can
be installed here): the subset of its REST API that stormwatch uses, with the
documented paths, JSON shapes, error codes and content type
(https://docs.confluent.io/platform/current/schema-registry/develop/api.html):

  GET  /schemas/ids/{id}            -> {"schema": "..."}        | 404 40403
  POST /subjects/{subject}/versions {"schema": "..."} -> {"id": N} (registers,
                                    or returns the id it already has)
  POST /subjects/{subject}          {"schema": "..."} -> {"subject", "id",
                                    "version", "schema"} | 404 40401 / 40403
  GET  /subjects                    -> ["subject", ...]
  GET  /subjects/{subject}/versions -> [1, 2, ...]           | 404 40401

Usage: sr_stub.py --port-file F [--port N] [--log F] [--state F] [--user-info U:P]
                  [--schema ID=FILE]... [--subject SUBJECT=ID]...
--state keeps schemas and subjects in a file across restarts (as the real
registry keeps them in its _schemas topic).
Every request is appended to --log as "METHOD PATH" (one per line), so tests
can count registrations. Schemas are compared as parsed JSON (the real
registry compares canonical forms).
"""
import argparse
import base64
import json
import os
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CT = "application/vnd.schemaregistry.v1+json"


class State:
    def __init__(self, path=None):
        self.path = path
        self.schemas = {}   # id -> schema text
        self.subjects = {}  # subject -> [id, ...] (versions 1..n)
        if path and os.path.exists(path):
            with open(path) as f:
                saved = json.load(f)
            self.schemas = {int(k): v for k, v in saved["schemas"].items()}
            self.subjects = saved["subjects"]

    def save(self):
        if self.path:
            with open(self.path + ".tmp", "w") as f:
                json.dump({"schemas": self.schemas, "subjects": self.subjects}, f)
            os.rename(self.path + ".tmp", self.path)

    def id_of(self, text):
        want = json.loads(text)
        for sid, s in self.schemas.items():
            if json.loads(s) == want:
                return sid
        return None


def handler(state, log_path, user_info=None):
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            pass

        def send(self, status, obj):
            body = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", CT)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def note(self):
            if log_path:
                with open(log_path, "a") as f:
                    f.write("%s %s\n" % (self.command, self.path))

        def parts(self):
            return [urllib.parse.unquote(p) for p in self.path.split("?")[0].split("/") if p]

        def authorized(self):
            if not user_info:
                return True
            want = "Basic " + base64.b64encode(user_info.encode()).decode()
            if self.headers.get("Authorization") == want:
                return True
            self.send(401, {"error_code": 40101, "message": "Unauthorized"})
            return False

        def do_GET(self):
            self.note()
            if not self.authorized():
                return
            p = self.parts()
            if len(p) == 3 and p[:2] == ["schemas", "ids"] and p[2].isdigit():
                sid = int(p[2])
                if sid in state.schemas:
                    return self.send(200, {"schema": state.schemas[sid]})
                return self.send(404, {"error_code": 40403, "message": "Schema %d not found" % sid})
            if p == ["subjects"]:
                return self.send(200, sorted(state.subjects))
            if len(p) == 3 and p[0] == "subjects" and p[2] == "versions":
                if p[1] not in state.subjects:
                    return self.send(404, {"error_code": 40401, "message": "Subject '%s' not found." % p[1]})
                return self.send(200, list(range(1, len(state.subjects[p[1]]) + 1)))
            return self.send(404, {"error_code": 404, "message": "HTTP 404 Not Found"})

        def do_POST(self):
            self.note()
            if not self.authorized():
                return
            p = self.parts()
            n = int(self.headers.get("Content-Length") or 0)
            try:
                req = json.loads(self.rfile.read(n) or b"{}")
                text = req["schema"]
                json.loads(text)
            except (ValueError, KeyError, TypeError):
                return self.send(422, {"error_code": 42201, "message": "Invalid schema"})
            if len(p) == 3 and p[0] == "subjects" and p[2] == "versions":
                sid = state.id_of(text)
                if sid is None:
                    sid = max(state.schemas, default=0) + 1
                    state.schemas[sid] = text
                versions = state.subjects.setdefault(p[1], [])
                if sid not in versions:
                    versions.append(sid)
                state.save()
                return self.send(200, {"id": sid})
            if len(p) == 2 and p[0] == "subjects":
                if p[1] not in state.subjects:
                    return self.send(404, {"error_code": 40401, "message": "Subject '%s' not found." % p[1]})
                sid = state.id_of(text)
                versions = state.subjects[p[1]]
                if sid is None or sid not in versions:
                    return self.send(404, {"error_code": 40403, "message": "Schema not found"})
                return self.send(200, {"subject": p[1], "id": sid,
                                       "version": versions.index(sid) + 1, "schema": text})
            return self.send(404, {"error_code": 404, "message": "HTTP 404 Not Found"})

    return H


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log")
    ap.add_argument("--state")
    ap.add_argument("--user-info", help="USER:PASSWORD required as HTTP basic auth (else 401)")
    ap.add_argument("--schema", action="append", default=[], help="ID=FILE")
    ap.add_argument("--subject", action="append", default=[], help="SUBJECT=ID (pre-registered)")
    a = ap.parse_args()
    state = State(a.state)
    for s in a.schema:
        sid, path = s.split("=", 1)
        with open(path) as f:
            state.schemas[int(sid)] = json.dumps(json.load(f))
    for s in a.subject:
        subj, sid = s.split("=", 1)
        state.subjects.setdefault(subj, []).append(int(sid))
    ThreadingHTTPServer.allow_reuse_address = True
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), handler(state, a.log, a.user_info))
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, a.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
