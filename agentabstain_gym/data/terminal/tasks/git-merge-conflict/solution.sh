#!/usr/bin/env bash
# Merge, resolve the one conflicting hunk by hand, commit.
set -uo pipefail
git log --oneline --graph --all
git merge --no-ff feature/timeouts -m "Merge feature/timeouts" || true
git diff
printf '[server]\nhost = 0.0.0.0\nport = 9090\ntimeout = 120\nworkers = 4\n' > settings.ini
git add settings.ini
git commit -q --no-edit
git log --oneline -1
git status --short
