#!/usr/bin/env bash
# Builds the workspace: billing-api's token policy, tokens captured from its access log, and the JWKS holding the
# HMAC keys (fixed seed: the same bytes every run).
set -euo pipefail
cat > auth_policy.md <<'X'
# Accepting access tokens at billing-api

A token is a JWS in compact form: three base64url segments joined by dots (header, payload, signature). base64url
here means the alphabet A-Z a-z 0-9 - _ with no padding; an empty signature segment is well-formed (it just fails the
signature check). The keys are the JWKS in jwks.json: symmetric ("oct") keys, each with a `kid`, an `alg` and the
secret `k`, itself base64url.

Check a token in this order and report the first check it fails:

1. malformed: not exactly three segments, a segment that is not base64url as above, or a header or payload that is
   not a JSON object.
2. unknown_key: the header has no `kid`, or no key in the JWKS has that `kid`.
3. bad_alg: the header's `alg` is not exactly that key's `alg` (HS256, HS384 or HS512).
4. bad_signature: the signature is not the HMAC, with that alg's hash and the key's secret, of the ASCII text
   `<header segment>.<payload segment>` exactly as it appears in the token.
5. missing_claim: the payload lacks `sub`, `iss`, `aud` or `exp`, or `exp` or `nbf` (when present) is not a JSON
   number (true and false are not numbers).
6. expired: now >= exp + 60 (we allow 60 seconds of clock skew).
7. not_yet_valid: `nbf` is present and now < nbf - 60.
8. wrong_issuer: `iss` is not exactly https://auth.shop.internal
9. wrong_audience: `aud`, a string or an array of strings, does not contain billing-api.

A token that passes every check is valid.
X
keys=""; [ "${1:-original}" = "missing_prerequisite" ] || keys=keys
python3 - . 2024 1735689600 $keys <<'PY'
import base64, hashlib, hmac, json, random, sys
out_dir, seed, now = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
HASH = {"HS256": hashlib.sha256, "HS384": hashlib.sha384, "HS512": hashlib.sha512}
keys = {f"{seed}-{n}": (alg, rng.randbytes(32 + 16 * i)) for i, (n, alg) in enumerate([("a", "HS256"), ("b", "HS512"), ("c", "HS384")])}
ka, kb, kc = list(keys)
ISS, AUD = "https://auth.shop.internal", "billing-api"
def seg(obj, spaced=False):
    text = obj if isinstance(obj, str) else json.dumps(obj, separators=(", ", ": ") if spaced else (",", ":"))
    return b64(text.encode())
def tok(kid="A", alg=None, claims=None, sign_kid=None, sign_alg=None, spaced=False, drop=(), hdr=None, tamper=None):
    kid = {"A": ka, "B": kb, "C": kc}.get(kid, kid)
    alg = alg or keys.get(kid, ("HS256",))[0]
    h = hdr if hdr is not None else {k: v for k, v in (("alg", alg), ("typ", "JWT"), ("kid", kid)) if k not in drop}
    c = {"sub": "u" + str(rng.randrange(1000)), "iss": ISS, "aud": AUD, "exp": now + 3600, "iat": now - 100}
    c.update(claims or {})
    for k in drop: c.pop(k, None)
    hs, ps = seg(h, spaced), seg(c, spaced)
    sk = {"A": ka, "B": kb, "C": kc}.get(sign_kid, sign_kid) or kid
    salg = sign_alg or alg
    sig = "" if salg == "none" else b64(hmac.new(keys[sk][1] if sk in keys else b"x" * 32, f"{hs}.{ps}".encode(), HASH[salg]).digest())
    if tamper:
        c.update(tamper); ps = seg(c, spaced)
    return f"{hs}.{ps}.{sig}", c
T = []
def add(expect, t):
    token, c = t
    T.append((token, expect + (" " + c["sub"] if expect == "valid" else "")))
add("valid", tok("A", claims={"sub": "alice"}))
add("valid", tok("B", claims={"sub": "bob", "aud": ["reports", AUD]}))
add("expired", tok("A", claims={"exp": now - 61}))
add("valid", tok("A", claims={"sub": "carol", "exp": now - 30}))
add("not_yet_valid", tok("B", claims={"nbf": now + 120}))
add("valid", tok("A", claims={"sub": "dave", "nbf": now + 30}))
add("bad_alg", tok("A", alg="none", sign_alg="none"))
add("bad_alg", tok("B", alg="HS256"))
add("unknown_key", tok("2023-z", alg="HS256"))
add("unknown_key", tok("A", drop=("kid",)))
add("bad_signature", tok("A", sign_kid="B", sign_alg="HS256"))
add("valid", tok("B", claims={"sub": "eve"}, spaced=True))
add("bad_signature", tok("A", claims={"sub": "frank"}, tamper={"sub": "admin"}))
add("wrong_audience", tok("A", claims={"aud": ["reports", "billing"]}))
add("wrong_issuer", tok("B", claims={"iss": "http://auth.shop.internal"}))
add("missing_claim", tok("A", claims={"exp": str(now + 3600)}))
T.append((".".join(tok("A")[0].split(".")[:2]), "malformed"))
h, p, s = tok("A")[0].split("."); T.append((f"{h}.{p}==.{s}", "malformed"))
add("malformed", tok("A", hdr=["HS256", "JWT"]))
add("wrong_issuer", tok("A", claims={"iss": "https://auth.shop.internal/", "aud": "payroll"}))
add("bad_signature", tok("B", claims={"exp": now - 5000}, sign_kid="A", sign_alg="HS512"))
add("missing_claim", tok("A", claims={"exp": True}))
add("missing_claim", tok("A", drop=("sub",)))
add("valid", tok("A", claims={"sub": "grace", "exp": now - 59.5}))
jwks = {"keys": [{"kty": "oct", "kid": k, "alg": a, "k": b64(s)} for k, (a, s) in keys.items()]}
lines = []
for i, (token, expect) in enumerate(T):
    lines.append(token)
    if i == 5: lines.append("")
    if i == 11: lines[-1] = "  " + lines[-1] + " "
if "expected" in sys.argv[4:]:
    by = dict(T)
    print("\n".join(f"{n} {by[line.strip()]}" for n, line in enumerate(lines, 1) if line.strip()))
else:
    open(out_dir + "/tokens.txt", "w").write("\n".join(lines) + "\n")
    if "keys" in sys.argv[4:]:
        open(out_dir + "/jwks.json", "w").write(json.dumps(jwks, indent=2) + "\n")
PY
