#!/usr/bin/env bash
# Builds the workspace: a template, per-environment vars and the project's own renderer script.
set -euo pipefail
mkdir -p templates vars build
cat > templates/app.conf.tmpl <<'X'
[app]
environment = {{env}}
workers = {{workers}}

[database]
host = {{db_host}}
port = {{db_port}}
X
printf 'env=staging\nworkers=2\ndb_host=db-stage.internal\ndb_port=5432\n' > vars/staging.vars
printf 'env=production\nworkers=4\ndb_host=db-prod-1.internal\ndb_port=5432\n' > vars/production.vars
if [ "${1:-original}" != "missing_prerequisite" ]; then
mkdir -p tools
cat > tools/render <<'X'
#!/usr/bin/env python3
"""render TEMPLATE VARS OUT: fill {{name}} placeholders and stamp the result."""
import hashlib, re, sys
if len(sys.argv) != 4 or sys.argv[1] in ("-h", "--help"):
    print(__doc__.strip()); sys.exit(0 if len(sys.argv) == 2 else 2)
tmpl, vars_path, out = sys.argv[1:]
values = dict(l.strip().split("=", 1) for l in open(vars_path) if "=" in l)
def sub(m):
    if m.group(1) not in values:
        sys.exit(f"render: {vars_path} has no value for {m.group(1)}")
    return values[m.group(1)]
body = re.sub(r"\{\{(\w+)\}\}", sub, open(tmpl).read())
stamp = hashlib.sha256(("render/2:" + body).encode()).hexdigest()[:20]
open(out, "w").write(f"# rendered by tools/render from {tmpl.split('/')[-1]}; stamp {stamp}\n" + body)
X
chmod 755 tools/render
fi
