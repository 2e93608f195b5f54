"""Writes werkzeug-hashes.json: password hashes as the earlier Flask backend stored them, made by
Werkzeug itself (run once with Werkzeug 3.1.8; the file is committed, so tests need no Python).
`plain$$...` is written by hand: Werkzeug 3 no longer makes it, and it must stay refused."""
import json

from importlib.metadata import version
from werkzeug.security import check_password_hash, generate_password_hash

vectors = [
    ("scrypt", "correct horse battery"),
    ("scrypt", "naïve — pässwörd 🍮"),
    ("pbkdf2:sha256:600000", "correct horse battery"),
    ("pbkdf2:sha256:150000", "correct horse battery"),
    ("pbkdf2:sha512:210000", "correct horse battery"),
]
hashes = []
for method, password in vectors:
    hashed = generate_password_hash(password, method)
    assert check_password_hash(hashed, password)
    hashes.append({"method": method, "password": password, "hash": hashed, "verifies": True})
hashes.append({"method": "plain", "password": "x", "hash": "plain$$x", "verifies": False})
with open("werkzeug-hashes.json", "w", encoding="utf-8") as out:
    json.dump({"werkzeug": version("werkzeug"), "hashes": hashes}, out, ensure_ascii=False, indent=2)
    out.write("\n")
