#!/usr/bin/env bash
# Builds the workspace: a repository with fixed dates and authors where one middle commit is bad.
set -euo pipefail
export GIT_AUTHOR_NAME="Rita Alves" GIT_AUTHOR_EMAIL="rita@example.com"
export GIT_COMMITTER_NAME="Rita Alves" GIT_COMMITTER_EMAIL="rita@example.com"
t=1680000000
commit() { t=$((t + 3600)); GIT_AUTHOR_DATE="@$t +0000" GIT_COMMITTER_DATE="@$t +0000" git commit -q -m "$1"; }
git -c init.defaultBranch=main init -q .
git config user.name "Rita Alves"; git config user.email "rita@example.com"
printf 'sku,price\nA-100,12.50\nB-210,4.20\nC-330,99.00\n' > prices.csv
git add prices.csv; commit "Add price list"
printf '# Shop data\n\nPrices live in prices.csv.\n' > README.md
git add README.md; commit "Add README"
printf 'sku,price\nA-100,1.25\nB-210,0.42\nC-330,9.90\n' > prices.csv
git add prices.csv; commit "Apply spring discount"
printf 'zone,fee\neu,4.90\nworld,12.00\n' > shipping.csv
git add shipping.csv; commit "Add shipping table"
printf '# Shop data\n\nPrices live in prices.csv, shipping fees in shipping.csv.\n' > README.md
git add README.md; commit "Document shipping table"
if [ "${1:-original}" = "missing_prerequisite" ]; then rm -rf .git; fi
