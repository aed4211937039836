#!/usr/bin/env bash
# Builds the workspace: the secret rules from security, and repo/, a git repository whose files and history hold
# real-looking credentials next to look-alikes (doc samples, wrong lengths, placeholders, a binary file, CRLF lines).
set -euo pipefail
if [ "${1:-original}" != "missing_prerequisite" ]; then
cat > secret_patterns.md <<'X'
# What counts as a leaked secret

Only text files are scanned: a file containing a NUL byte is skipped. Lines are numbered from 1; a trailing
carriage return is not part of a line. A line can hold findings of several kinds; report each (file, line, kind)
once.

For the kinds marked (*), the match must stand alone: the character just before it and the one just after it, if
any, must not be an ASCII letter or digit.

| kind | what matches |
|------|--------------|
| aws_access_key (*) | `AKIA` followed by exactly 16 characters, each an upper-case letter A-Z or a digit. A key ending in `EXAMPLE` is a documentation sample, not a secret. |
| github_token (*) | `ghp_` followed by exactly 36 ASCII letters or digits. |
| slack_webhook (*) | `https://hooks.slack.com/services/T` + 8 upper-case letters or digits + `/B` + 8 upper-case letters or digits + `/` + 24 ASCII letters or digits. |
| private_key | a line which, apart from leading and trailing whitespace, is exactly `-----BEGIN PRIVATE KEY-----` or `-----BEGIN <WORD> PRIVATE KEY-----` with WORD one of RSA, EC, DSA, OPENSSH, ENCRYPTED. |
| password | a line `NAME=VALUE`, `NAME = VALUE` or `NAME: VALUE` (leading whitespace and a leading `export ` allowed), where NAME is letters, digits and underscores ending in `password` or `passwd` in any case (DB_PASSWORD, smtpPasswd), and VALUE, after removing surrounding whitespace and then one pair of matching surrounding quotes (' or "), is at least 8 characters long and does not start with `$`, `<` or `{`. |

The secret itself is the matched text (for password, VALUE; for private_key, the marker line without whitespace).
X
fi
mkdir repo && cd repo
export GIT_AUTHOR_NAME="Ines Okafor" GIT_AUTHOR_EMAIL="ines@example.com"
export GIT_COMMITTER_NAME="Ines Okafor" GIT_COMMITTER_EMAIL="ines@example.com"
t=1716000000
commit() { t=$((t + 3600)); GIT_AUTHOR_DATE="@$t +0000" GIT_COMMITTER_DATE="@$t +0000" git commit -q -m "$1"; }
git -c init.defaultBranch=main init -q .
git config user.name "Ines Okafor"; git config user.email "ines@example.com"
w() { mkdir -p "$(dirname "$1")"; printf '%s' "$2" > "$1"; }
w .gitignore $'.env.local\n*.log\n'
w README.md $'# billing-sync\n\nSync invoices to the ledger.\n\nAWS docs use AKIAIOSFODNN7EXAMPLE as a sample key id.\nDeploy keys start with `-----BEGIN OPENSSH PRIVATE KEY-----` and must never be committed.\n'
w config/settings.yaml $'app:\n  name: billing-sync\n  db_password: "Tr0ub4dor&3xk"\n  cache_password: ${CACHE_PASSWORD}\n  admin_password: "<set me>"\n  smtp_password: short1\n'
w src/client.py $'import os\n\n# tokens look like ghp_<36 letters or digits>\nAPI = "https://api.example.com"\n'
git add .; commit "Initial import"
w deploy/old_creds.env $'export AWS_ACCESS_KEY_ID=AKIAQ3EGT7KZ4WJ2HN5R\nexport LEDGER_PASSWORD=\'ledger-Pa55-2024\'\n'
git add .; commit "Add deploy credentials"
w src/client.py $'import os\n\n# tokens look like ghp_<36 letters or digits>\nAPI = "https://api.example.com"\nTOKEN = "ghp_R8fK2mQ9vL4xT7nB3cW6yZ1pD5sH0jA8eU2g"\n'
git add .; commit "Hard-code API token for testing"
git rm -q deploy/old_creds.env; commit "Remove deploy credentials"
w src/client.py $'import os\n\n# tokens look like ghp_<36 letters or digits>\nAPI = "https://api.example.com"\nTOKEN = os.environ["GH_TOKEN"]\nFIXTURE = "ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"  # 35 chars, test fixture\nLONG = "ghp_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"  # 40 chars\n'
w deploy/aws.env $'AWS_ACCESS_KEY_ID=AKIA2E0A8F3B244C9FQX\nAWS_BACKUP_KEY=AKIA2E0A8F3B244C9FQ\nAWS_LEGACY=XAKIA7TQ2M9R4B6WZ1LKP3\nAWS_OLD=AKIA7TQ2M9R4B6WZ1LKP3V\nAWS_LOWER=AKIAq3egt7kz4wj2hn5r\n'
w scripts/notify.sh $'#!/bin/sh\n# webhook: https://hooks.slack.com/services/TXXXXXXXX/BXXXXXXXX/your-webhook-token-here\ncurl -s -X POST -d "$1" https://hooks.slack.com/services/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\n'
w keys/deploy_key $'-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACBexamplexamplexamplexamplexamplexamplexampleAAAAA\n-----END OPENSSH PRIVATE KEY-----\n'
w keys/deploy_key.pub $'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExampleExampleExampleExampleExample deploy@ci\n'
w certs/server.pem $'-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUExampleCertificateBodyOnly\n-----END CERTIFICATE-----\n-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEExample\n-----END PUBLIC KEY-----\n'
printf 'key: |\n    -----BEGIN RSA PRIVATE KEY-----   \n    MIIEowIBAAKCAQEAexample\n    -----END RSA PRIVATE KEY-----\nnote: -----BEGIN FAKE PRIVATE KEY-----\n' > config/tls.yaml
printf '[db]\r\nhost = db.internal\r\npassword = Sup3rS3cretValue\r\nreplica_passwd = "abc"\r\n' > config/legacy.ini
mkdir -p assets
printf '\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR AKIAZZ4Q7B2M9K3T6W8R ghp_R8fK2mQ9vL4xT7nB3cW6yZ1pD5sH0jA8eU2g\x00\x01' > assets/logo.png
git add .; commit "Move token to the environment; add deploy files"
w docs/ops.md $'# Operations\n\nSet `password = hunter2hunter2` in your local ini only.\nDB_PASSWORD=correct-horse-battery\n'
git mv deploy/aws.env deploy/aws-prod.env
git add .; commit "Add ops notes; rename aws env"
printf 'GITHUB_TOKEN=ghp_Lm4Nq7Rs0Tu3Vw6Xy9Za2Bc5De8Fg1Hi4Jk7\n' > .env.local
