"""Stand-ins for the suite's services, for checking the gateway alone (deploy/check-gateway.sh).
Each answers {"service", "method", "path", "host", "requestId", "bodyBytes"} and sends an X-Request-ID
of its own (the gateway must hide it), and WebFinger `Access-Control-Allow-Origin: *` as the federation
service does. A path ending in fail-503 answers the service's own 503;
.../stream sends server-sent events slowly; .../close-connection, and any request whose
X-Check-Close-Port header names the fake's own port, closes the connection without answering;
.../slow-answer answers after 4 s; a change-feed request that waits (wait > 0), after 3 s.

    python3 -m postly_suite.fake_services NAME=PORT...   (serves until stopped)
"""
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def handler_for(name):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def answer(self):
            length = int(self.headers.get("Content-Length") or 0)
            remaining = length
            while remaining > 0:
                remaining -= len(self.rfile.read(min(remaining, 65536)))
            if self.path.endswith("/stream"):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(b"event: notification\ndata: {\"n\":1}\n\n")
                self.wfile.flush()
                time.sleep(3)  # a gateway that buffers would hold the first event back
                self.wfile.write(b"event: notification\ndata: {\"n\":2}\n\n")
                self.wfile.flush()
                self.close_connection = True
                return
            if self.path.endswith("/close-connection") or self.headers.get("X-Check-Close-Port") == str(self.server.server_port):
                self.close_connection = True
                return
            if self.path.endswith("/slow-answer"):
                time.sleep(4)
            if re.match(r"/api/changes\?(.*&)?wait=0*[1-9]", self.path):
                time.sleep(3)
            status = 503 if "fail-503" in self.path else 200
            body = json.dumps({"service": name, "method": self.command, "path": self.path, "host": self.headers.get("Host"),
                               "requestId": self.headers.get("X-Request-ID"),
                               "bodyBytes": length}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("X-Request-ID", "set-by-the-service")
            if self.path.startswith("/.well-known/webfinger"):
                self.send_header("Access-Control-Allow-Origin", "*")  # as the federation service does
            try:
                self.end_headers()
                self.wfile.write(body)
            except BrokenPipeError:
                pass  # the gateway gave up on a slow answer

        do_GET = do_POST = do_PUT = do_DELETE = answer

    return Handler


if __name__ == "__main__":
    for spec in sys.argv[1:]:
        name, port = spec.split("=")
        server = ThreadingHTTPServer(("127.0.0.1", int(port)), handler_for(name))
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
    threading.Event().wait()
