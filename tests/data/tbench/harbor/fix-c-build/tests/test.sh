#!/bin/bash
# No pytest: build from a clean tree, run a few sums, write Harbor's reward file.
mkdir -p /logs/verifier
ok=1
cd /app && make clean >/dev/null 2>&1; make >/tmp/build.log 2>&1 || { cat /tmp/build.log; ok=0; }
for pair in "2 3 5" "-7 4 -3" "1000000 2345678 3345678"; do
  set -- $pair
  got=$(/app/calc "$1" "$2" 2>&1)
  if [ "$got" != "$3" ]; then echo "calc $1 $2: got '$got', want '$3'"; ok=0; fi
done
grep -q 'return a + b' /app/util.c || { echo "util.c no longer adds"; ok=0; }
echo $ok > /logs/verifier/reward.txt
