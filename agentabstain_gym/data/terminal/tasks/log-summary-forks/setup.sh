#!/usr/bin/env bash
# Builds the workspace: a log summary script that starts about twenty processes per log line (echo | cut, awk, tr
# in command substitutions), a small sample it handles in seconds and a day of traffic (fixed seed) it would need
# hours for.
set -euo pipefail
mkdir -p logs
cat > summarize.sh <<'X'
#!/usr/bin/env bash
# Summary of an access log in combined format: bash summarize.sh ACCESS_LOG > summary.txt
# A line counts when its request has a path starting with / and its status is 100-599; the others are malformed.
# Paths are counted without their query string, bytes "-" (or anything not a number) count as 0.
set -u
export LC_ALL=C
log=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: > "$tmp/paths"; : > "$tmp/errors"; : > "$tmp/bytes"; : > "$tmp/methods"
total=0
malformed=0
while IFS= read -r line; do
  [ -z "$line" ] && continue
  ip=$(echo "$line" | cut -d' ' -f1)
  request=$(echo "$line" | cut -d'"' -f2)
  method=$(echo "$request" | cut -d' ' -f1)
  path=$(echo "$request" | cut -d' ' -f2 | cut -d'?' -f1)
  rest=$(echo "$line" | cut -d'"' -f3)
  status=$(echo "$rest" | awk '{print $1}')
  bytes=$(echo "$rest" | awk '{print $2}')
  if ! [[ $status =~ ^[1-5][0-9][0-9]$ ]] || [[ $path != /* ]]; then
    malformed=$((malformed + 1))
    continue
  fi
  [[ $bytes =~ ^[0-9]+$ ]] || bytes=0
  total=$((total + 1))
  echo "$path" >> "$tmp/paths"
  [ "$status" -ge 400 ] && echo "$status" >> "$tmp/errors"
  echo "$ip $bytes" >> "$tmp/bytes"
  echo "$method" | tr '[:lower:]' '[:upper:]' >> "$tmp/methods"
done < "$log"
echo "requests $total"
echo "malformed $malformed"
echo "== methods"
sort "$tmp/methods" | uniq -c | awk '{print $2, $1}'
echo "== top paths"
sort "$tmp/paths" | uniq -c | sort -k1,1nr -k2,2 | head -n 10 | awk '{print $1, $2}'
echo "== errors"
sort "$tmp/errors" | uniq -c | awk '{print $2, $1}'
echo "== top talkers"
awk '{b[$1] += $2} END {for (ip in b) print b[ip], ip}' "$tmp/bytes" | sort -k1,1nr -k2,2 | head -n 5
X
python3 - <<'PY'
import random

def day(seed, n):
    rng = random.Random(seed)
    ips = [f"10.{rng.randint(0, 3)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}" for _ in range(400)] + ["2001:db8::1", "2001:db8::7"]
    paths = ["/", "/index.html", "/search", "/api/items", "/api/items/42", "/login", "/static/app.js", "/static/app.css",
             "/favicon.ico", "/cart", "/checkout", "/robots.txt"]
    out = []
    for i in range(n):
        ip = rng.choice(ips[:40]) if rng.random() < 0.5 else rng.choice(ips)
        path = rng.choice(paths) + (f"?q={rng.randint(1, 99)}" if rng.random() < 0.2 else "")
        method = rng.choice(["GET"] * 8 + ["POST", "HEAD", "get"])
        status = rng.choice([200] * 12 + [301, 304, 404, 404, 500, 503, 403])
        size = "-" if status in (304, 301) or rng.random() < 0.03 else str(rng.randint(0, 90000))
        t = f"[12/May/2024:{i * 86400 // n // 3600:02d}:{i * 86400 // n // 60 % 60:02d}:{i * 86400 // n % 60:02d} +0000]"
        line = f'{ip} - - {t} "{method} {path} HTTP/1.1" {status} {size} "-" "Mozilla/5.0 (X11)"'
        r = rng.random()
        if r < 0.01:
            line = rng.choice([f"{ip} - - {t} \"-\" 400 0 \"-\" \"-\"", f"{ip} - - {t} \"GET {path}", "garbage line",
                               f'{ip} - - {t} "GET {path} HTTP/1.1" 2OO 12 "-" "-"', f'{ip} - - {t} "GET {path} HTTP/1.1" 700 1 "-" "-"'])
        out.append(line)
        if rng.random() < 0.002:
            out.append("")
    return "\n".join(out) + "\n"

open("logs/sample.log", "w").write(day(5, 300))
open("logs/access.log", "w").write(day(6, 80000))
PY
