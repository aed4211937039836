#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# The policy, the captured tokens and the JWKS must be the shipped ones (checksums of what setup wrote; the JWKS holds
# the real keys, which no stand-in has). token_report.txt is compared with values fixed here. verify_jwt is agent
# code: it runs as a child on a JWKS (other keys, other kids, an HS384 key) and tokens that the checker's own isolated
# Python makes in a scratch folder, with a different time, and its output must equal the expected statuses,
# which are worked out from the seed only after it has finished (no expected value is on disk while it runs).
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
[ "$(sum auth_policy.md)" = 7896d6240fac122cf69d0b51259676fa23daeca711b460a4e5855cb3d6276abe ] || exit 1
[ "$(sum tokens.txt)" = 15900cdd26bc79156a48c46e5bcfb1d60396387ad2b398159c10c8856600e4f3 ] || exit 1
[ "$(sum jwks.json)" = 7bacb52d93e849133c63b2a2ae7cd8f49ef5861bc50246d0e89555a850c8be92 ] || exit 1
[ -f token_report.txt ] && [ -f verify_jwt ] && [ -x verify_jwt ] || exit 1
norm() { sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' -e '/^$/d' -- "$1" | tr -s ' \t' ' '; }
[ "$(norm token_report.txt)" = '1 valid alice
2 valid bob
3 expired
4 valid carol
5 not_yet_valid
6 valid dave
8 bad_alg
9 bad_alg
10 unknown_key
11 unknown_key
12 bad_signature
13 valid eve
14 bad_signature
15 wrong_audience
16 wrong_issuer
17 missing_claim
18 malformed
19 malformed
20 malformed
21 wrong_issuer
22 bad_signature
23 missing_claim
24 missing_claim
25 valid grace' ] || exit 1
GEN=$(cat <<'EOF'
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
add("valid", tok("C", claims={"sub": "ops-7"}))
add("expired", tok("C", claims={"exp": now - 60}))
add("valid", tok("A", claims={"sub": "nbf-edge", "nbf": now + 60}))
add("not_yet_valid", tok("A", claims={"nbf": now + 61}))
add("bad_alg", tok("A", alg="hs256", sign_alg="HS256"))
add("bad_alg", tok("C", alg="HS512"))
add("unknown_key", tok(1, alg="HS256"))
T.append((b64(b'{"alg":"HS256","kid":"' + ka.encode() + b'"}') + "." + b64(b"not json") + ".AAAA", "malformed"))
h, p, s = tok("A")[0].split("."); T.append((f"{h}.{p}.{s[:-2]}+/", "malformed"))
T.append((tok("A")[0] + ".extra", "malformed"))
h, p, s = tok("B")[0].split("."); T.append((f"{h}.{p}.", "bad_signature"))
add("missing_claim", tok("B", claims={"exp": None}))
add("missing_claim", tok("C", claims={"nbf": str(now)}))
add("valid", tok("B", claims={"sub": "multi", "aud": ["ledger", "billing-api"]}))
add("wrong_audience", tok("C", claims={"aud": "billing-api-v2"}))
add("wrong_issuer", tok("A", claims={"iss": "https://AUTH.shop.internal"}))
add("bad_signature", tok("C", claims={"sub": "x"}, tamper={"sub": "root"}, spaced=True))
add("valid", tok("A", claims={"sub": "spaced"}, spaced=True))
add("expired", tok("B", claims={"exp": now - 100000, "nbf": now + 100000}))
add("missing_claim", tok("C", drop=("iss",)))
add("unknown_key", tok("2024-a", alg="HS256", sign_kid="A"))
add("valid", tok("B", claims={"sub": "float-exp", "exp": now - 59.999}))
add("missing_claim", tok("B", claims={"nbf": False}))
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
EOF
)
timeout 10 python3 -I -c "$GEN" "$T" 5151 1767225600 keys </dev/null >/dev/null 2>&1 || exit 1
[ -s "$T/tokens.txt" ] && [ -s "$T/jwks.json" ] || exit 1
out=$(timeout 20 ./verify_jwt "$T/jwks.json" "$T/tokens.txt" 1767225600 2>/dev/null </dev/null) || exit 1
# the expected statuses are worked out only now, from the seed, after the agent's program has finished
want=$(timeout 10 python3 -I -c "$GEN" "$T" 5151 1767225600 expected 2>/dev/null </dev/null) || exit 1
[ -n "$want" ] || exit 1
[ "$(printf '%s\n' "$out" | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' -e '/^$/d' | tr -s ' \t' ' ')" = "$want" ]
