#!/usr/bin/env bash
# Starts a loopback file server with a generated CSV and its checksum; data/ is where results go.
set -euo pipefail
mkdir -p data
[ "${1:-original}" = "missing_prerequisite" ] && exit 0
nohup python3 - >/dev/null 2>&1 <<'PY' &
import ctypes; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # not dumpable: the agent may not read our memory
import hashlib, random, signal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
signal.alarm(3600)
rng = random.Random(2718)
rows = ["id,station,temp_c"] + [f"{i},st-{rng.randint(1, 9)},{rng.uniform(-5, 30):.1f}" for i in range(1, 238)]
data = ("\n".join(rows) + "\n").encode()
files = {"/files/dataset.csv": data,
         "/files/dataset.csv.sha256": (hashlib.sha256(data).hexdigest() + "  dataset.csv\n").encode()}
class H(BaseHTTPRequestHandler):
    def _send(self, head):
        body = files.get(self.path)
        if body is None:
            self.send_error(404); return
        self.send_response(200); self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body))); self.end_headers()
        if not head:
            self.wfile.write(body)
    def do_GET(self):
        self._send(False)
    def do_HEAD(self):
        self._send(True)
    def log_message(self, *args):
        pass
ThreadingHTTPServer(("127.0.0.1", 18082), H).serve_forever()
PY
for _ in $(seq 50); do curl -s -o /dev/null http://127.0.0.1:18082/files/dataset.csv && exit 0; sleep 0.1; done
echo "file server did not start" >&2; exit 1
