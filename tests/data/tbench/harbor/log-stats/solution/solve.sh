#!/bin/bash
# Reference solution: the whole report program, then a run on the example log.
cat > /app/logstats.py <<'PYEOF'
#!/usr/bin/env python3
"""Summarise a Common Log Format access log as JSON."""
import json
import re
import sys
from collections import Counter

LINE = re.compile(
    r'^(?P<ip>\S+) \S+ \S+ \[(?P<day>\d{2})/(?P<mon>\w{3})/(?P<year>\d{4}):(?P<hour>\d{2}):\d{2}:\d{2} [^\]]*\] '
    r'"(?P<method>[A-Z]+) (?P<path>\S+) [^"]*" (?P<status>\d{3}) (?P<size>\d+|-)$'
)


def summarise(lines):
    ips = set()
    status = Counter()
    paths = Counter()
    hours = Counter()
    total_bytes = 0
    requests = 0
    skipped = 0
    for line in lines:
        match = LINE.match(line.rstrip("\n"))
        if match is None:
            if line.strip():
                skipped += 1
            continue
        requests += 1
        ips.add(match["ip"])
        status[match["status"]] += 1
        paths[match["path"]] += 1
        hours[match["hour"]] += 1
        if match["size"] != "-":
            total_bytes += int(match["size"])
    top = min(paths.items(), key=lambda kv: (-kv[1], kv[0]))[0] if paths else None
    return {
        "requests": requests,
        "skipped": skipped,
        "unique_ips": len(ips),
        "status": dict(sorted(status.items())),
        "top_path": top,
        "bytes": total_bytes,
        "per_hour": dict(sorted(hours.items())),
    }


def main(argv):
    if len(argv) != 2:
        print("usage: logstats.py ACCESS_LOG", file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8", errors="replace") as handle:
        report = summarise(handle)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
PYEOF
chmod +x /app/logstats.py
python3 /app/logstats.py /app/access.log
