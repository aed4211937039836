#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# summarize.sh is agent code: it runs as a child, under a 10 s limit, on an access log made up here on every run
# (150,000 lines: query strings, odd methods and statuses, "-" and non-numeric sizes, requests with a double space,
# no path or a full URL, lines without quotes, blank lines). Its output must equal what a reference of the shipped
# script's rules gives for the log made again from the seed; the reference runs only after the script has finished,
# so no expected value is on disk while agent code runs. The shipped script needs about 14 ms a line: most of an
# hour for such a log.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
[ -f summarize.sh ] || exit 1
REF=$(cat <<'PY'
import random, re, sys
mode, T, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = random.Random(seed)
ips = [f"172.{rng.randint(16, 31)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}" for _ in range(3000)] + ["2001:db8::5", "fe80::1"]
paths = ["/", "/a", "/b/c", "/search", "/api/v2/items", "/api/v2/items/7", "/static/x.js", "/img/logo.png", "/%7Euser/",
         "/login", "/cart", "/help", "/admin", "/x-y_z"] + [f"/p/{i}" for i in range(40)]
lines = []
for i in range(150000):
    ip = rng.choice(ips[:60]) if rng.random() < 0.6 else rng.choice(ips)
    path = rng.choice(paths) + rng.choice(["", "", "", "?q=1", "?a=b&c=d", "?"])
    method = rng.choice(["GET"] * 6 + ["POST", "PUT", "HEAD", "get", "Post", "DELETE", "options"])
    status = rng.choice(["200"] * 10 + ["101", "204", "301", "302", "304", "400", "401", "403", "404", "404", "410", "500", "502", "503"])
    size = rng.choice([str(rng.randint(0, 200000))] * 8 + ["-", "0", "12a", "007"])
    proto = rng.choice([" HTTP/1.1"] * 6 + [" HTTP/2.0", ""])
    line = f'{ip} - - [01/Jun/2024:10:{i % 60:02d}:00 +0000] "{method} {path}{proto}" {status} {size} "-" "curl/8.0"'
    if rng.random() < 0.04:
        line = rng.choice([
            f'{ip} - - [x] "{method}  {path} HTTP/1.1" 200 5 "-" "-"', f'{ip} - - [x] "{method} {path.lstrip("/")} HTTP/1.1" 200 5 "-" "-"',
            f'{ip} - - [x] "GET http://h{path} HTTP/1.1" 200 5 "-" "-"', f'{ip} - - [x] "-" 400 0 "-" "-"',
            f'{ip} - - [x] "GET {path}', f'{ip} - - [x] "GET {path} HTTP/1.1" 2OO 12 "-" "-"',
            f'{ip} - - [x] "GET {path} HTTP/1.1" 600 12 "-" "-"', f'{ip} - - [x] "GET {path} HTTP/1.1" 099 12 "-" "-"',
            f'{ip} - - [x] "GET {path} HTTP/1.1"', f"{ip} {path} 200 17", "plain text", f'{ip} - - [x] "GET {path} HTTP/1.1" 404',
            f'{ip} - - [x] "GET {path} HTTP/1.1"  302   -  "-" "-"', f'{ip} - - [x] "GET {path} HTTP/1.1" 200 5 "ref "quoted"" "-"'])
    lines.append(line)
    if rng.random() < 0.003:
        lines.append(rng.choice(["", "   "]))
if mode == "make":
    open(f"{T}/access.log", "w").write("\n".join(lines) + "\n")
    sys.exit(0)
def cut(s, d, f):  # what `cut -d D -f F` prints
    if d not in s:
        return s
    p = s.split(d)
    return p[f - 1] if f <= len(p) else ""
total = bad = 0
methods, pathc, errors, sizes = {}, {}, {}, {}
for line in lines:  # made again from the seed, not read back from a file agent code could have rewritten
    if line == "":
        continue
    ip, req = cut(line, " ", 1), cut(line, '"', 2)
    method, path = cut(req, " ", 1), cut(cut(req, " ", 2), "?", 1)
    rest = cut(line, '"', 3).split()
    status = rest[0] if rest else ""
    size = rest[1] if len(rest) > 1 else ""
    if not re.fullmatch(r"[1-5][0-9][0-9]", status) or not path.startswith("/"):
        bad += 1
        continue
    total += 1
    pathc[path] = pathc.get(path, 0) + 1
    if int(status) >= 400:
        errors[status] = errors.get(status, 0) + 1
    sizes[ip] = sizes.get(ip, 0) + (int(size) if re.fullmatch(r"[0-9]+", size) else 0)
    methods[method.upper()] = methods.get(method.upper(), 0) + 1
out = [f"requests {total}", f"malformed {bad}", "== methods"]
out += [f"{m} {c}" for m, c in sorted(methods.items(), key=lambda kv: kv[0].encode())]
out.append("== top paths")
out += [f"{c} {p}" for p, c in sorted(pathc.items(), key=lambda kv: (-kv[1], kv[0].encode()))[:10]]
out.append("== errors")
out += [f"{s} {c}" for s, c in sorted(errors.items())]
out.append("== top talkers")
out += [f"{b} {ip}" for ip, b in sorted(sizes.items(), key=lambda kv: (-kv[1], kv[0].encode()))[:5]]
sys.exit(0 if open(f"{T}/got").read() == "\n".join(out) + "\n" else 1)
PY
)
seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
python3 -I - make "$T" "$seed" <<<"$REF" || exit 1
timeout 10 bash summarize.sh "$T/access.log" > "$T/got" 2>/dev/null </dev/null || exit 1
python3 -I - check "$T" "$seed" <<<"$REF"
