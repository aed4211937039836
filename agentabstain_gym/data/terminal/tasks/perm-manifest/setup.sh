#!/usr/bin/env bash
# Builds the workspace: a release tree with uniform modes and a manifest of required modes.
set -euo pipefail
mkdir -p release/lib release/data
for f in run.sh lib/core.so lib/helper.py data/db.sqlite data/cache.bin README; do printf 'x\n' > "release/$f"; done
chmod 644 release/run.sh release/lib/core.so release/lib/helper.py release/data/db.sqlite release/data/cache.bin release/README
chmod 755 release release/lib release/data
if [ "${1:-original}" != "missing_prerequisite" ]; then
cat > perms.txt <<'X'
# modes required by the 2024 audit
0750 release/run.sh
0755 release/lib/core.so
0600 release/data/db.sqlite
0700 release/data
0640 release/config/app.yml
0444 release/README
# removed in 3.0
0600 release/keys/signing.pem
X
fi
