"""A stand-in for an OpenTelemetry collector on loopback: OTLP/HTTP with JSON bodies
(`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`), every span it is sent kept as
(service, name, trace id, span id, parent span id), ids in lower-case hex."""
import base64
import http.server
import json
import re
import threading


def hex_id(value):
    """An id as OTLP/JSON writes it (hex) or as protobuf's JSON mapping does (base64), in hex."""
    if re.fullmatch(r"[0-9a-fA-F]{16}|[0-9a-fA-F]{32}", value or ""):
        return value.lower()
    return base64.b64decode(value).hex() if value else ""


class FakeCollector:
    def __init__(self):
        self.spans, self.lock = [], threading.Lock()
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self):
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exception):
        self.server.shutdown()
        self.server.server_close()

    def trace(self, trace_id):
        """The spans of one trace so far."""
        with self.lock:
            return [span for span in self.spans if span["trace"] == trace_id]

    def handler(self):
        collector = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                spans = []
                for resource in json.loads(body or b"{}").get("resourceSpans", []):
                    attributes = {a["key"]: a.get("value", {}).get("stringValue") for a in resource.get("resource", {}).get("attributes", [])}
                    for scope in resource.get("scopeSpans", []):
                        for span in scope.get("spans", []):
                            spans.append({"service": attributes.get("service.name"), "name": span.get("name"),
                                          "trace": hex_id(span.get("traceId")), "span": hex_id(span.get("spanId")),
                                          "parent": hex_id(span.get("parentSpanId"))})
                with collector.lock:
                    collector.spans.extend(spans)
                answer = b"{}"
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                try:
                    self.end_headers()
                    self.wfile.write(answer)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # an exporter killed by the system test's drill does not wait for it

            def log_message(self, *arguments):
                pass

        return Handler
