#!/usr/bin/env bash
# A verifier following auth_policy.md step by step: strict base64url, HMAC over the segments as sent (never
# re-encoded JSON), numeric dates with 60 s leeway; then the report for the capture time.
set -euo pipefail
cat auth_policy.md
head -c 400 tokens.txt; echo
cat > verify_jwt <<'PY'
#!/usr/bin/env python3
"""verify_jwt JWKS TOKENS NOW: one line `LINE STATUS` (valid: `LINE valid SUB`) per non-empty line of TOKENS."""
import base64
import hashlib
import hmac
import json
import re
import sys

B64URL = re.compile(r"[A-Za-z0-9_-]*")
HASH = {"HS256": hashlib.sha256, "HS384": hashlib.sha384, "HS512": hashlib.sha512}


def unb64(s):
    if not B64URL.fullmatch(s) or len(s) % 4 == 1:
        raise ValueError(s)
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check(token, keys, now):
    parts = token.split(".")
    if len(parts) != 3:
        return "malformed"
    try:
        raw = [unb64(p) for p in parts]
        header, claims = json.loads(raw[0]), json.loads(raw[1])
    except ValueError:
        return "malformed"
    if not isinstance(header, dict) or not isinstance(claims, dict):
        return "malformed"
    kid = header.get("kid")
    if not isinstance(kid, str) or kid not in keys:
        return "unknown_key"
    alg, secret = keys[kid]
    if header.get("alg") != alg or alg not in HASH:
        return "bad_alg"
    mac = hmac.new(secret, f"{parts[0]}.{parts[1]}".encode("ascii"), HASH[alg]).digest()
    if not hmac.compare_digest(mac, raw[2]):
        return "bad_signature"
    if any(k not in claims for k in ("sub", "iss", "aud", "exp")) or not number(claims["exp"]) \
            or ("nbf" in claims and not number(claims["nbf"])):
        return "missing_claim"
    if now >= claims["exp"] + 60:
        return "expired"
    if "nbf" in claims and now < claims["nbf"] - 60:
        return "not_yet_valid"
    if claims["iss"] != "https://auth.shop.internal":
        return "wrong_issuer"
    aud = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
    if "billing-api" not in aud:
        return "wrong_audience"
    return f"valid {claims['sub']}"


jwks = json.load(open(sys.argv[1]))
keys = {k["kid"]: (k["alg"], unb64(k["k"])) for k in jwks["keys"]}
now = float(sys.argv[3])
for n, line in enumerate(open(sys.argv[2], encoding="utf-8").read().split("\n"), 1):
    if line.strip():
        print(n, check(line.strip(), keys, now))
PY
chmod +x verify_jwt
now=$(date -u -d '2025-01-01T00:00:00Z' +%s)
./verify_jwt jwks.json tokens.txt "$now" > token_report.txt
cat token_report.txt
