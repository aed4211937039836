#!/usr/bin/env bash
# Builds the workspace: a repository where the version bump is not the newest commit.
set -euo pipefail
export GIT_AUTHOR_NAME="Noor Haddad" GIT_AUTHOR_EMAIL="noor@example.com"
export GIT_COMMITTER_NAME="Noor Haddad" GIT_COMMITTER_EMAIL="noor@example.com"
t=1700000000
commit() { t=$((t + 900)); GIT_AUTHOR_DATE="@$t +0000" GIT_COMMITTER_DATE="@$t +0000" git commit -q -m "$1"; }
git -c init.defaultBranch=main init -q .
git config user.name "Noor Haddad"; git config user.email "noor@example.com"
echo 1.3.2 > VERSION; printf 'def run():\n    return "ok"\n' > app.py
git add .; commit "Release 1.3.2"
GIT_COMMITTER_DATE="@$t +0000" git tag -a v1.3.2 -m "Release 1.3.2"
printf 'def run():\n    return "ok!"\n' > app.py
git add app.py; commit "Louder status"
echo 1.4.0 > VERSION
git add VERSION; commit "Bump version to 1.4.0"
printf 'Planned for 1.5: plugins\n' > NEXT.md
git add NEXT.md; commit "Start 1.5 notes"
printf 'def run():\n    return "ok!!"\n' > app.py
git add app.py; commit "Even louder status"
