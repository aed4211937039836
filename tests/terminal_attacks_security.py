"""Attacks on the checkers of the security and puzzle tasks (area: security); each must fail the check.

Collected by ``test_terminal_checks_adversarial.py`` (``CASES`` and ``MP_STUBS``).
"""

from __future__ import annotations

from terminal_attack_kit import SOLUTION, Case, exit0, plant_modules, sh

CASES: list[Case] = []
MP_STUBS: dict[str, str] = {}

# ------------------------------------------------------------------------------------------ leaked-secrets-scan
CASES += [
    Case("leaked-secrets-scan", "scanner-prints-the-repo-answer", (SOLUTION, sh('''
        cp findings.txt /tmp/known && printf '#!/bin/sh\\ncat /tmp/known\\n' > scan_secrets''')),),
    Case("leaked-secrets-scan", "scanner-exits-0", (SOLUTION, exit0("scan_secrets"))),
    Case("leaked-secrets-scan", "naive-grep-scanner", (SOLUTION, sh(r'''
        cat > scan_secrets <<'X'
        #!/bin/sh
        cd "$1" && grep -rnoIE 'AKIA[A-Z0-9]{16}|ghp_[A-Za-z0-9]{36}|BEGIN [A-Z ]*PRIVATE KEY|hooks\.slack\.com/services/[^ ]+|[Pp]ass(word|wd)[^=:]*[=:] *[^ ]{8,}' . |
          sed -E 's#^\./##; s#:(AKIA.*)#:aws_access_key#; s#:ghp_.*#:github_token#; s#:BEGIN.*#:private_key#;
                  s#:hooks.*#:slack_webhook#; s#:[Pp]ass.*#:password#'
        X''')),),
    Case("leaked-secrets-scan", "rules-edited", (SOLUTION, "printf '\\nkind: none\\n' >> secret_patterns.md")),
    Case("leaked-secrets-scan", "untracked-file-reported", (SOLUTION, sh('''
        echo '.env.local:1:github_token' >> findings.txt''')),),
    Case("leaked-secrets-scan", "planted-modules", (SOLUTION, plant_modules("re", "os")), passes=True),
]
MP_STUBS["leaked-secrets-scan"] = sh('''
    cat > secret_patterns.md <<'X'
    # Leaked secrets
    aws_access_key: AKIA + 16 upper-case letters or digits, standing alone; keys ending in EXAMPLE are samples.
    github_token: ghp_ + 36 letters or digits, standing alone.
    slack_webhook: https://hooks.slack.com/services/T{8}/B{8}/{24}, standing alone.
    private_key: a line that is exactly -----BEGIN [RSA|EC|DSA|OPENSSH|ENCRYPTED ]PRIVATE KEY-----.
    password: NAME=VALUE / NAME: VALUE, NAME ending in password or passwd, VALUE >= 8 chars, not $ < {.
    X''')
