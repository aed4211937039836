#!/usr/bin/env bash
# Starts three of the four listed services on loopback: one healthy, one failing, one hanging.
set -euo pipefail
printf 'api 18083\nauth 18084\ncache 18085\nsearch 18086\nqueue 18088\n' > services.txt
nohup python3 - >/dev/null 2>&1 <<'PY' &
import ctypes; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # not dumpable: the agent may not read our memory
import signal, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
signal.alarm(3600)
def handler(code, delay=0.0):
    class H(BaseHTTPRequestHandler):
        def do_GET(self):
            time.sleep(delay)
            body = b"ok\n" if code == 200 else b"error\n"
            self.send_response(code if self.path == "/health" else 404)
            self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
        def log_message(self, *args):
            pass
    return H
servers = [ThreadingHTTPServer(("127.0.0.1", 18083), handler(200)),
           ThreadingHTTPServer(("127.0.0.1", 18084), handler(503)),
           ThreadingHTTPServer(("127.0.0.1", 18086), handler(200)),
           ThreadingHTTPServer(("127.0.0.1", 18088), handler(200, delay=120))]
for s in servers:
    s.daemon_threads = True
    threading.Thread(target=s.serve_forever, daemon=True).start()
signal.pause()
PY
for _ in $(seq 50); do curl -s -o /dev/null http://127.0.0.1:18086/health && exit 0; sleep 0.1; done
echo "services did not start" >&2; exit 1
