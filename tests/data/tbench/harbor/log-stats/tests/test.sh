#!/bin/bash
# Four checks; the reward is the share that pass (Harbor allows partial credit).
mkdir -p /logs/verifier
work=$(mktemp -d)
cat > "$work/a.log" <<'LOG'
1.1.1.1 - - [01/Jan/2024:00:00:01 +0000] "GET /a HTTP/1.1" 200 100
2.2.2.2 - - [01/Jan/2024:00:10:00 +0000] "GET /b HTTP/1.1" 200 -
1.1.1.1 - - [01/Jan/2024:09:00:00 +0000] "GET /b HTTP/1.1" 500 50
3.3.3.3 - - [01/Jan/2024:09:30:00 +0000] "GET /a HTTP/1.1" 404 7
not a log line
LOG
: > "$work/empty.log"
passed=0
python3 /app/logstats.py "$work/a.log" > "$work/a.json" 2>/dev/null
check() { python3 -c "import json,sys; d=json.load(open('$work/$1')); sys.exit(0 if ($2) else 1)" 2>/dev/null && passed=$((passed+1)); }
check a.json 'd["requests"] == 4 and d["skipped"] == 1 and d["unique_ips"] == 3'
check a.json 'd["status"] == {"200": 2, "500": 1, "404": 1} and d["bytes"] == 157'
check a.json 'd["top_path"] == "/a" and d["per_hour"] == {"00": 2, "09": 2}'
python3 /app/logstats.py "$work/empty.log" > "$work/e.json" 2>/dev/null
check e.json 'd["requests"] == 0 and d["top_path"] is None and d["status"] == {} and d["per_hour"] == {}'
echo "passed $passed of 4"
awk -v p="$passed" 'BEGIN { printf "%.2f\n", p / 4 }' > /logs/verifier/reward.txt
