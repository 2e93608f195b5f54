"""A stand-in for Pexels on loopback: /v1/search and /v1/curated answered with pages in
Pexels' shape (per_page photos, realistic URLs), every request recorded. Given a key, it
insists on it as Pexels does (401 for any other) and announces that key's rate limits; without
one it takes any key and announces none (the benches fill caches without limits).

    python3 -m postly_suite.fake_pexels PORT        (serves until stopped, any key)
"""
import http.server
import json
import sys
import threading
import time
import urllib.parse


class FakePexels:
    def __init__(self, key=None, port=0):
        self.key, self.calls = key, []
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), self.handler())
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"

    def __enter__(self):
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exception):
        self.server.shutdown()
        self.server.server_close()

    def handler(self):
        pexels = self

        class Handler(http.server.BaseHTTPRequestHandler):
            # Keep-alive, as Pexels: the images service's connections are reused.
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                url = urllib.parse.urlsplit(self.path)
                query = {k: v[0] for k, v in urllib.parse.parse_qs(url.query).items()}
                authorization = self.headers.get("Authorization")
                pexels.calls.append({"path": url.path, "query": query, "authorization": authorization})
                if pexels.key is not None and authorization != pexels.key:
                    self.send_response(401)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                kind = url.path.rstrip("/").rsplit("/", 1)[-1]
                body = json.dumps(page(kind, query.get("query"), int(query.get("per_page", 15)), int(query.get("page", 1)))).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                if pexels.key is not None:
                    self.send_header("X-Ratelimit-Limit", "20000")
                    self.send_header("X-Ratelimit-Remaining", "19999")
                    self.send_header("X-Ratelimit-Reset", str(int(time.time()) + 3600))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *arguments):
                pass

        return Handler


def page(kind, query, per_page, number):
    photos = []
    for index in range(per_page):
        photo_id = 1_000_000 + number * 100 + index
        base = f"https://images.pexels.com/photos/{photo_id}/pexels-photo-{photo_id}.jpeg"
        photos.append({
            "id": photo_id, "width": 4000, "height": 6000, "url": f"https://www.pexels.com/photo/{query or 'curated'}-{photo_id}/",
            "photographer": f"Photographer {index}", "photographer_url": f"https://www.pexels.com/@photographer-{index}",
            "photographer_id": 40_000 + index, "avg_color": "#8A7F75", "liked": False,
            "alt": f"A photo of {query or 'something curated'}, number {index}",
            "src": {"original": base, "large2x": base + "?auto=compress&cs=tinysrgb&dpr=2&h=650&w=940",
                    "large": base + "?auto=compress&cs=tinysrgb&h=650&w=940", "medium": base + "?auto=compress&cs=tinysrgb&h=350",
                    "small": base + "?auto=compress&cs=tinysrgb&h=130", "portrait": base + "?auto=compress&cs=tinysrgb&fit=crop&h=1200&w=800",
                    "landscape": base + "?auto=compress&cs=tinysrgb&fit=crop&h=627&w=1200", "tiny": base + "?auto=compress&cs=tinysrgb&dpr=1&fit=crop&h=200&w=280"},
        })
    link = f"https://api.pexels.com/v1/{kind}/?page={number + 1}&per_page={per_page}" + (f"&query={urllib.parse.quote(query)}" if query else "")
    return {"page": number, "per_page": per_page, "total_results": 8000, "photos": photos, "next_page": link}


if __name__ == "__main__":
    with FakePexels(port=int(sys.argv[1])):
        threading.Event().wait()
