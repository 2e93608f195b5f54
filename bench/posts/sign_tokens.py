"""Signs access tokens the way the auth service does (EdDSA, a kid) and writes the JWKS,
so bench/posts.sh can drive the posts service without the auth service.
usage: sign_tokens.py DIR COUNT  -> DIR/jwks.json, DIR/tokens.txt (one token a line)"""
import base64, json, sys, time, uuid
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives import serialization

def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

directory, count = sys.argv[1], int(sys.argv[2])
key = Ed25519PrivateKey.generate()
public = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
kid = "bench"
with open(f"{directory}/jwks.json", "w") as f:
    json.dump({"keys": [{"kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "kid": kid, "x": b64(public)}]}, f)
header = b64(json.dumps({"alg": "EdDSA", "typ": "JWT", "kid": kid}).encode())
now = int(time.time())
with open(f"{directory}/tokens.txt", "w") as f:
    for i in range(count):
        claims = {"sub": str(uuid.uuid4()), "sid": str(uuid.uuid4()), "iat": now - 60, "exp": now + 86400,
                  "iss": "postly-auth", "name": f"Bench User {i}"}
        signing_input = header + "." + b64(json.dumps(claims).encode())
        f.write(signing_input + "." + b64(key.sign(signing_input.encode())) + "\n")
