#!/usr/bin/env bash
# A scanner implementing secret_patterns.md; run it on HEAD's tracked files and on every earlier commit.
set -euo pipefail
cat secret_patterns.md
cat > scan_secrets <<'PY'
#!/usr/bin/env python3
"""scan_secrets DIR [--values]: print path:line:kind (and, with --values, a tab and the secret) per finding."""
import os
import re
import sys

AN = r"(?<![A-Za-z0-9])"
END = r"(?![A-Za-z0-9])"
STANDALONE = [
    ("aws_access_key", re.compile(AN + r"AKIA[A-Z0-9]{16}" + END)),
    ("github_token", re.compile(AN + r"ghp_[A-Za-z0-9]{36}" + END)),
    ("slack_webhook", re.compile(AN + r"https://hooks\.slack\.com/services/T[A-Z0-9]{8}/B[A-Z0-9]{8}/[A-Za-z0-9]{24}" + END)),
]
PRIVATE = re.compile(r"-----BEGIN (?:(?:RSA|EC|DSA|OPENSSH|ENCRYPTED) )?PRIVATE KEY-----")
PASSWORD = re.compile(r"\s*(?:export\s+)?[A-Za-z0-9_]*(?:password|passwd)\s*(?:=|:)(.*)", re.IGNORECASE)
# NAME must be followed directly by ' = ', '=' or ': '; \s* before '=' covers 'NAME = VALUE'


def findings(line):
    for kind, rx in STANDALONE:
        for m in rx.finditer(line):
            if kind == "aws_access_key" and m.group().endswith("EXAMPLE"):
                continue
            yield kind, m.group()
    if PRIVATE.fullmatch(line.strip()):
        yield "private_key", line.strip()
    m = PASSWORD.fullmatch(line)
    if m:
        value = m.group(1).strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        if len(value) >= 8 and value[0] not in "$<{":
            yield "password", value


root = sys.argv[1]
show = "--values" in sys.argv[2:]
out = set()
for dirpath, dirnames, files in os.walk(root):
    dirnames[:] = [d for d in dirnames if d != ".git"]
    for name in files:
        path = os.path.join(dirpath, name)
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        data = open(path, "rb").read()
        if b"\0" in data:
            continue
        rel = os.path.relpath(path, root)
        for no, raw in enumerate(data.decode("utf-8", "replace").split("\n"), 1):
            for kind, value in findings(raw[:-1] if raw.endswith("\r") else raw):
                out.add((rel, no, kind, value) if show else (rel, no, kind, ""))
for rel, no, kind, value in sorted(out):
    print(f"{rel}:{no}:{kind}" + (f"\t{value}" if show else ""))
PY
chmod +x scan_secrets
snap() { rm -rf "/tmp/snap-$1"; mkdir -p "/tmp/snap-$1"; git -C repo archive "$1" | tar -x -C "/tmp/snap-$1"; }
snap HEAD
./scan_secrets /tmp/snap-HEAD | LC_ALL=C sort -u > findings.txt
./scan_secrets /tmp/snap-HEAD --values | cut -f2 | sort -u > /tmp/head-values
: > /tmp/history.all
for c in $(git -C repo rev-list --reverse HEAD); do
  snap "$c"
  ./scan_secrets "/tmp/snap-$c" --values | sed "s/^/$c:/" >> /tmp/history.all
  rm -rf "/tmp/snap-$c"
done
# first commit per secret, only secrets no longer found at HEAD
awk -F'\t' 'NR == FNR {head[$0] = 1; next} !($2 in head) && !($2 in seen) {seen[$2] = 1; print $1}' \
  /tmp/head-values /tmp/history.all | LC_ALL=C sort -u > history.txt
rm -rf /tmp/snap-HEAD /tmp/head-values /tmp/history.all
cat findings.txt history.txt
