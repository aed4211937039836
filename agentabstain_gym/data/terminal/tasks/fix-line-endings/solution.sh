#!/usr/bin/env bash
# CRLF -> LF, strip trailing blanks, then trim trailing empty lines and add one final newline.
set -euo pipefail
find notes -name '*.txt' -type f | sort
find notes -name '*.txt' -type f -exec sed -i -e 's/\r$//' -e 's/[ \t]*$//' {} +
find notes -name '*.txt' -type f | while read -r f; do
  python3 -c 'import sys; p = sys.argv[1]; t = open(p).read().rstrip("\n"); open(p, "w").write(t + "\n")' "$f"
done
od -c notes/meetings/friday.txt | tail -n 3
