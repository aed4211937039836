#!/usr/bin/env bash
set -eu
git rev-parse --git-dir >/dev/null 2>&1 || exit 1
[ "$(git rev-parse --abbrev-ref HEAD)" = main ] || exit 1
[ "$(git rev-list --count HEAD)" = 6 ] || exit 1
[ "$(git log --format=%s HEAD~1 -1)" = "Document shipping table" ] || exit 1
[ "$(git log --format=%s --reverse HEAD | head -n 3 | tail -n 1)" = "Apply spring discount" ] || exit 1
[ "$(git show HEAD:prices.csv)" = "$(printf 'sku,price\nA-100,12.50\nB-210,4.20\nC-330,99.00')" ] || exit 1
git cat-file -e HEAD:shipping.csv || exit 1
git show HEAD:README.md | grep -q shipping.csv || exit 1
[ -z "$(git status --porcelain)" ]
