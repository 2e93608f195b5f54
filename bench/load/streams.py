"""Notification streams held open as the app keeps them, one user each, for bench/load.sh:
logs the seed's users in (bcrypt, before the measured mix starts), opens COUNT streams,
touches READY_FILE once all are open, and holds them until killed.
usage: streams.py GATEWAY_URL COUNT SEED_JSON READY_FILE"""
import json
import sys
import threading

from postly_suite.client import Client

gateway, count, seed, ready_file = Client.at(sys.argv[1]), int(sys.argv[2]), json.load(open(sys.argv[3])), sys.argv[4]
users = [seed["users"][i % len(seed["users"])] for i in range(count)]
tokens = [gateway.login(user["email"], user["password"])["accessToken"] for user in users]
# Held here: a stream whose connection is dropped closes.
streams = [gateway.stream("/api/notifications/stream", token, timeout=3600) for token in tokens]
open(ready_file, "w").close()
threading.Event().wait()
