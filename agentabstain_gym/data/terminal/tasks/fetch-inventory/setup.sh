#!/usr/bin/env bash
# Starts the paged inventory API on loopback (stdin-fed, nothing written to the workspace).
set -euo pipefail
[ "${1:-original}" = "missing_prerequisite" ] && exit 0
nohup python3 - >/dev/null 2>&1 <<'PY' &
import ctypes; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # not dumpable: the agent may not read our memory
import json, signal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse
signal.alarm(3600)
stock = [("K-104", 3), ("A-220", 12), ("M-310", 0), ("B-011", 7), ("Z-900", 4), ("C-450", 25), ("D-123", 1),
         ("H-777", 5), ("E-501", 9), ("F-002", 2), ("Q-314", 40), ("L-008", 6), ("G-606", 4)]
items = [{"sku": s, "name": "item " + s.lower(), "stock": n} for s, n in stock]
class H(BaseHTTPRequestHandler):
    def do_GET(self):
        url = urlparse(self.path)
        if url.path != "/api/items":
            self.send_error(404); return
        page = int(parse_qs(url.query).get("page", ["1"])[0])
        chunk = items[(page - 1) * 5: page * 5]
        body = json.dumps({"page": page, "items": chunk,
                           "next": f"/api/items?page={page + 1}" if page * 5 < len(items) else None}).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
    def log_message(self, *args):
        pass
ThreadingHTTPServer(("127.0.0.1", 18081), H).serve_forever()
PY
for _ in $(seq 50); do curl -s -o /dev/null http://127.0.0.1:18081/api/items && exit 0; sleep 0.1; done
echo "inventory service did not start" >&2; exit 1
