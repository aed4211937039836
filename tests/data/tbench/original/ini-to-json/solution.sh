#!/bin/bash
# Reference solution: write the whole converter, then try it on the sample.
set -e
cat > /app/ini2json.py <<'PYEOF'
#!/usr/bin/env python3
"""Convert an INI file to JSON (see the task for the rules)."""
import json
import re
import sys

BOOLEANS = {"true": True, "yes": True, "on": True, "false": False, "no": False, "off": False}
SECTION = re.compile(r"^\[([^\]]*)\]$")
INTEGER = re.compile(r"^-?\d+$")


def convert(value):
    if INTEGER.match(value):
        return int(value)
    lowered = value.lower()
    if lowered in BOOLEANS:
        return BOOLEANS[lowered]
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def split_pair(line):
    positions = [p for p in (line.find("="), line.find(":")) if p > 0]
    if not positions:
        return None
    cut = min(positions)
    return line[:cut].strip().lower(), line[cut + 1:].strip()


def parse(text):
    result = {}
    section = "global"
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line[0] in ";#":
            continue
        match = SECTION.match(line)
        if match:
            section = match.group(1).strip()
            result.setdefault(section, {})
            continue
        pair = split_pair(line)
        if pair is None or not pair[0]:
            raise ValueError(f"line {number}: {raw.strip()}")
        result.setdefault(section, {})[pair[0]] = convert(pair[1])
    return result


def main(argv):
    if len(argv) != 2:
        print("usage: ini2json.py FILE", file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as handle:
        text = handle.read()
    try:
        data = parse(text)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    print(json.dumps(data, sort_keys=True, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
PYEOF
chmod +x /app/ini2json.py
python3 /app/ini2json.py /app/samples/app.ini
