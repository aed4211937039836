#!/usr/bin/env bash
# Let git bisect run the self-test between the first commit and main.
set -euo pipefail
first=$(git rev-list --max-parents=0 HEAD)
git bisect start main "$first"
git bisect run bash tools/selftest.sh
git rev-parse refs/bisect/bad > first_bad.txt
git bisect reset
git log -1 --oneline "$(cat first_bad.txt)"
