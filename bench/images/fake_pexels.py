"""A fast stand-in for Pexels for bench/images.sh: answers /v1/search and /v1/curated with
pages in Pexels' shape (per_page photos, realistic URLs), for any key, without limits.
usage: fake_pexels.py PORT"""
import json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit, quote


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
    link = f"https://api.pexels.com/v1/{kind}/?page={number + 1}&per_page={per_page}" + (f"&query={quote(query)}" if query else "")
    return {"page": number, "per_page": per_page, "total_results": 8000, "photos": photos, "next_page": link}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        url = urlsplit(self.path)
        parameters = {k: v[0] for k, v in parse_qs(url.query).items()}
        kind = url.path.rstrip("/").rsplit("/", 1)[-1]
        body = json.dumps(page(kind, parameters.get("query"), int(parameters.get("per_page", 15)), int(parameters.get("page", 1)))).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *arguments):
        pass


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
