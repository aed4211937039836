#!/usr/bin/env bash
# Skip comments, apply existing paths, record the rest.
set -euo pipefail
cat perms.txt
: > not_found.txt
grep -v '^[[:space:]]*#' perms.txt | grep -v '^[[:space:]]*$' | while read -r mode path; do
  if [ -e "$path" ]; then chmod "$mode" "$path"; else echo "$path" >> not_found.txt; fi
done
cat not_found.txt
find release -exec stat -c '%a %n' {} +
