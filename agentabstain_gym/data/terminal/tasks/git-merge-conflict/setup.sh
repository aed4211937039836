#!/usr/bin/env bash
# Builds the workspace: main and a feature branch that both edit the same lines of settings.ini.
set -euo pipefail
export GIT_AUTHOR_NAME="Sam Okafor" GIT_AUTHOR_EMAIL="sam@example.com"
export GIT_COMMITTER_NAME="Sam Okafor" GIT_COMMITTER_EMAIL="sam@example.com"
t=1690000000
commit() { t=$((t + 600)); GIT_AUTHOR_DATE="@$t +0000" GIT_COMMITTER_DATE="@$t +0000" git commit -q -m "$1"; }
git -c init.defaultBranch=main init -q .
git config user.name "Sam Okafor"; git config user.email "sam@example.com"
printf '[server]\nhost = 0.0.0.0\nport = 8080\ntimeout = 30\nworkers = 4\n' > settings.ini
printf 'service settings\n' > README
git add .; commit "Initial settings"
if [ "${1:-original}" != "missing_prerequisite" ]; then
  git checkout -q -b feature/timeouts
  printf '[server]\nhost = 0.0.0.0\nport = 8081\ntimeout = 120\nworkers = 4\n' > settings.ini
  git add settings.ini; commit "Raise request timeout"
  printf 'Retries back off exponentially.\n' > RETRIES.md
  git add RETRIES.md; commit "Document retry policy"
  git checkout -q main
else
  t=$((t + 1200))  # same dates on main as in a clone that has the branch
fi
printf '[server]\nhost = 0.0.0.0\nport = 9090\ntimeout = 45\nworkers = 4\n' > settings.ini
git add settings.ini; commit "Move service to port 9090"
printf 'service settings\nport 9090 since the proxy change\n' > README
git add README; commit "Note port change"
