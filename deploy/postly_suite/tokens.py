"""Access tokens signed the way the auth service signs them (EdDSA, a kid), and the JWKS
that verifies them, so a bench can drive a service without the auth service.

    python3 -m postly_suite.tokens DIR COUNT   -> DIR/jwks.json, DIR/tokens.txt (one token a line)
"""
import base64
import json
import os
import subprocess
import sys
import time
import uuid


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def openssl(*arguments):
    # openssl rather than a Python crypto package: it is on every machine the suite runs on.
    return subprocess.run(["openssl", *arguments], capture_output=True, check=True).stdout


def write_keys_and_tokens(directory, count):
    key, signed = os.path.join(directory, "key.pem"), os.path.join(directory, "signed")
    openssl("genpkey", "-algorithm", "ed25519", "-out", key)
    public = openssl("pkey", "-in", key, "-pubout", "-outform", "DER")[-32:]
    kid = "bench"
    with open(os.path.join(directory, "jwks.json"), "w") as f:
        json.dump({"keys": [{"kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "kid": kid, "x": b64(public)}]}, f)
    header = b64(json.dumps({"alg": "EdDSA", "typ": "JWT", "kid": kid}).encode())
    now = int(time.time())
    with open(os.path.join(directory, "tokens.txt"), "w") as f:
        for i in range(count):
            claims = {"sub": str(uuid.uuid4()), "sid": str(uuid.uuid4()), "iat": now - 60, "exp": now + 86400,
                      "iss": "postly-auth", "aud": "postly", "name": f"Bench User {i}"}
            signing_input = header + "." + b64(json.dumps(claims).encode())
            # Ed25519 signs a whole message, which openssl reads from a file, not a pipe.
            with open(signed, "w") as message:
                message.write(signing_input)
            signature = openssl("pkeyutl", "-sign", "-inkey", key, "-rawin", "-in", signed)
            f.write(signing_input + "." + b64(signature) + "\n")


if __name__ == "__main__":
    write_keys_and_tokens(sys.argv[1], int(sys.argv[2]))
