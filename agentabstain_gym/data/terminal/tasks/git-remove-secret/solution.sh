#!/usr/bin/env bash
# Untrack .env, ignore it, and fold both into the unpushed commit.
set -euo pipefail
git show --stat HEAD
git rm -q --cached .env
echo .env > .gitignore
git add .gitignore
git commit -q --amend --no-edit
git show --stat HEAD
git status --short --ignored
