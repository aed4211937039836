#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# The rules must be security's own file (checksum of what setup wrote). findings.txt and history.txt are compared with
# values fixed here (the repository's commit hashes are fixed by its dates). scan_secrets is agent code: it runs as
# a child on a tree the checker writes in a scratch folder (look-alikes the agent never saw), and its output must be
# exactly the findings fixed below.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
[ "$(sum secret_patterns.md)" = 793d0ab05e5fe87c68cc947f23b15c667b426af234a0e8a44500d2300a0c6d94 ] || exit 1
[ -f findings.txt ] && [ -f history.txt ] && [ -f scan_secrets ] && [ -x scan_secrets ] || exit 1
norm() { sed -e 's/[[:space:]]*$//' -e '/^$/d' -- "$1" | LC_ALL=C sort; }
[ "$(norm findings.txt)" = 'config/legacy.ini:3:password
config/settings.yaml:3:password
config/tls.yaml:2:private_key
deploy/aws-prod.env:1:aws_access_key
docs/ops.md:4:password
keys/deploy_key:1:private_key
scripts/notify.sh:3:slack_webhook' ] || exit 1
[ "$(norm history.txt)" = '506e9c87a97bc2b7892fec509582f1c55dd41511:deploy/old_creds.env:1:aws_access_key
506e9c87a97bc2b7892fec509582f1c55dd41511:deploy/old_creds.env:2:password
9d4c3e821b339fa8698d6fec57ede9fe72e82f58:src/client.py:5:github_token' ] || exit 1
mkdir -p "$T/t/a b" "$T/t/deep/x/y" "$T/t/.hidden"
printf '%s\n' 'key=AKIAJ5Q2W8E4R6T1Y3U7 and ghp_0123456789abcdefghijABCDEFGHIJ012345' \
  'AKIAJ5Q2W8E4R6T1Y3U7AKIAJ5Q2W8E4R6T1Y3U7' 'sample AKIAABCDEFGHIEXAMPLE' \
  'token=ghp_0123456789abcdefghijABCDEFGHIJ012345_suffix' 'ghp_0123456789abcdefghijABCDEFGHIJ01234' \
  'two: ghp_0123456789abcdefghijABCDEFGHIJ012345 ghp_9876543210abcdefghijABCDEFGHIJ012345' > "$T/t/a b/notes.txt"
printf '%s\r\n' "export SMTP_PASSWD='abcdefgh'" 'smtpPassword: "abcdefg"' 'password_hint = something-long' \
  'ROOT_PASSWORD = {{ vault.root }}' 'Password="  spaced value  "' '  db.password = longvalue123' \
  'api_passwd:  $API_PASSWD' 'PASSWORD=Zx9!long-enough' > "$T/t/deep/x/y/app.env"
printf '%s\n' '-----BEGIN ENCRYPTED PRIVATE KEY-----' $'\t-----BEGIN EC PRIVATE KEY-----\t' \
  '-----BEGIN PGP PRIVATE KEY BLOCK-----' '-----BEGIN  PRIVATE KEY-----' '# -----BEGIN PRIVATE KEY-----' \
  '-----BEGIN PRIVATE KEY-----' > "$T/t/keys.txt"
printf '%s\n' 'url=https://hooks.slack.com/services/T1A2B3C4D/B9Z8Y7X6W/abcdefghijklmnopqrstuvwx' \
  'https://hooks.slack.com/services/T1A2B3C4D/B9Z8Y7X6W/abcdefghijklmnopqrstuvwxy' \
  'https://hooks.slack.com/services/t1a2b3c4d/b9z8y7x6w/abcdefghijklmnopqrstuvwx' > "$T/t/hook.sh"
printf 'x\0y AKIAJ5Q2W8E4R6T1Y3U7\n' > "$T/t/blob.bin"
printf '\n\nAWS=AKIAJ5Q2W8E4R6T1Y3U7' > "$T/t/.hidden/cfg"
printf '# caf\xe9\ndb_password = "\xe9t\xe9-2024-long"\n' > "$T/t/latin1.conf"
: > "$T/t/empty"
timeout 20 ./scan_secrets "$T/t" > "$T/out" 2>/dev/null </dev/null || exit 1
[ "$(norm "$T/out")" = '.hidden/cfg:3:aws_access_key
a b/notes.txt:1:aws_access_key
a b/notes.txt:1:github_token
a b/notes.txt:4:github_token
a b/notes.txt:6:github_token
deep/x/y/app.env:1:password
deep/x/y/app.env:5:password
deep/x/y/app.env:8:password
hook.sh:1:slack_webhook
keys.txt:1:private_key
keys.txt:2:private_key
keys.txt:6:private_key
latin1.conf:2:password' ]
