#!/usr/bin/env bash
# The even case must average the two middle elements: indexes mid-1 and mid.
set -euo pipefail
python3 -m unittest test_stats || true
sed -i 's/return (ordered\[mid\] + ordered\[mid + 1\]) \/ 2/return (ordered[mid - 1] + ordered[mid]) \/ 2/' stats.py
grep -n 'ordered\[mid' stats.py
rm -rf __pycache__
python3 -m unittest test_stats
python3 stats.py numbers.txt
