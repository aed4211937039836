#!/usr/bin/env bash
set -eu
[ "$(cat .env 2>/dev/null)" = "$(printf 'API_KEY=sk_live_51HxQ0example0key\nDB_PASSWORD=hunter2-prod')" ] || exit 1
git log --all --format= --name-only | grep -qx '.env' && exit 1
git cat-file -e HEAD:.gitignore || exit 1
git check-ignore -q .env || exit 1
[ "$(git show HEAD:deploy.yml)" = "$(printf 'image: shop/service:2.1\nreplicas: 2')" ] || exit 1
git log --format=%s | grep -qx 'Add service' || exit 1
[ -z "$(git status --porcelain)" ]
