#!/usr/bin/env bash
# Builds the workspace: the newest commit adds a deploy file together with a secrets file.
set -euo pipefail
export GIT_AUTHOR_NAME="Ivo Petrov" GIT_AUTHOR_EMAIL="ivo@example.com"
export GIT_COMMITTER_NAME="Ivo Petrov" GIT_COMMITTER_EMAIL="ivo@example.com"
t=1710000000
commit() { t=$((t + 1800)); GIT_AUTHOR_DATE="@$t +0000" GIT_COMMITTER_DATE="@$t +0000" git commit -q -m "$1"; }
git -c init.defaultBranch=main init -q .
git config user.name "Ivo Petrov"; git config user.email "ivo@example.com"
printf 'print("service")\n' > service.py
git add .; commit "Add service"
printf 'image: shop/service:2.1\nreplicas: 2\n' > deploy.yml
printf 'API_KEY=sk_live_51HxQ0example0key\nDB_PASSWORD=hunter2-prod\n' > .env
git add deploy.yml .env; commit "Add deployment config"
