#!/usr/bin/env bash
set -eu
# The tests must be the shipped ones, and they must pass, and the script must still run end to end.
[ "$(grep -c 'def test_' test_stats.py)" = 3 ] || exit 1
grep -q 'assertEqual(median(\[4, 1, 3, 2\]), 2.5)' test_stats.py || exit 1
rm -rf __pycache__
python3 -m unittest test_stats >/dev/null 2>&1 || exit 1
[ "$(python3 stats.py numbers.txt)" = "n=6 mean=9.83 median=9" ] || exit 1
python3 -c 'from stats import median; assert median([1, 2, 3, 4, 100, 200]) == 3.5 and median([7]) == 7'
