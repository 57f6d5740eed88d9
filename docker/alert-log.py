#!/usr/bin/env python3
"""A webhook receiver that logs what Alertmanager sends: one JSON line per
notification on stdout (status, group labels, and each alert's status and
labels). The compose stack's Alertmanager receiver; no dependencies beyond
Python's standard library. tests/e2e/test_monitoring.sh posts a real
Alertmanager webhook payload to it.

Usage: alert-log.py [PORT]   (default 8080; POST any path, GET /healthz)
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n)
        try:
            msg = json.loads(body)
            line = {
                "receiver": msg.get("receiver"),
                "status": msg.get("status"),
                "groupLabels": msg.get("groupLabels"),
                "alerts": [{"status": a.get("status"), "labels": a.get("labels"),
                            "startsAt": a.get("startsAt"), "endsAt": a.get("endsAt")}
                           for a in msg.get("alerts", [])],
            }
        except (ValueError, AttributeError) as e:
            self.send_response(400)
            self.end_headers()
            self.wfile.write(("not an Alertmanager webhook payload: %s\n" % e).encode())
            return
        print(json.dumps(line, sort_keys=True), flush=True)
        self.send_response(200)
        self.end_headers()

    def do_GET(self):
        self.send_response(200 if self.path == "/healthz" else 404)
        self.end_headers()

    def log_message(self, fmt, *args):  # the JSON lines only
        pass


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8080
    HTTPServer(("", port), Handler).serve_forever()
