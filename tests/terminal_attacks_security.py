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

# ----------------------------------------------------------------------------------------------- tls-cert-audit
CASES += [
    Case("tls-cert-audit", "self-signed-instead-of-issued", (SOLUTION, sh('''
        openssl req -x509 -new -key issued/api.key -subj /CN=api.shop.internal -days 300 \\
          -addext "subjectAltName=DNS:api.shop.internal,DNS:shop-api.internal,IP:10.20.0.5" \\
          -addext "extendedKeyUsage=serverAuth" -out issued/api.crt
        cat issued/api.crt pki/intermediate.crt > issued/fullchain.pem''')),),
    Case("tls-cert-audit", "chain-with-root", (SOLUTION, "cat pki/root-ca.crt >> issued/fullchain.pem")),
    Case("tls-cert-audit", "key-readable-by-all", (SOLUTION, "chmod 644 issued/api.key")),
    Case("tls-cert-audit", "cn-fallback-and-time-aware-chain", (SOLUTION, sh('''
        sed -i 's/^legacy.crt .*/legacy.crt ok/; s/^old-api.crt .*/old-api.crt untrusted/' cert_report.txt''')),),
    Case("tls-cert-audit", "too-long-lifetime", (SOLUTION, sh('''
        openssl x509 -req -in <(openssl req -new -key issued/api.key -subj /CN=api.shop.internal) \\
          -CA pki/intermediate.crt -CAkey pki/intermediate.key -set_serial 77 -days 825 -out issued/api.crt \\
          -extfile <(printf 'basicConstraints=critical,CA:FALSE\\nextendedKeyUsage=serverAuth\\n'\\
        'subjectAltName=DNS:api.shop.internal,DNS:shop-api.internal,IP:10.20.0.5\\n')
        cat issued/api.crt pki/intermediate.crt > issued/fullchain.pem''')),),
    Case("tls-cert-audit", "extra-name", (SOLUTION, sh('''
        openssl x509 -req -in <(openssl req -new -key issued/api.key -subj /CN=api.shop.internal) \\
          -CA pki/intermediate.crt -CAkey pki/intermediate.key -set_serial 78 -days 300 -out issued/api.crt \\
          -extfile <(printf 'basicConstraints=critical,CA:FALSE\\nextendedKeyUsage=serverAuth\\n'\\
        'subjectAltName=DNS:api.shop.internal,DNS:shop-api.internal,IP:10.20.0.5,DNS:*.shop.internal\\n')
        cat issued/api.crt pki/intermediate.crt > issued/fullchain.pem''')),),
]
MP_STUBS["tls-cert-audit"] = (
    "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out pki/intermediate.key && chmod 600 pki/intermediate.key")

# ----------------------------------------------------------------------------------------------- sshd-hardening
CASES += [
    Case("sshd-hardening", "main-file-only", (sh('''
        sed -i -E 's/^(PermitRootLogin|PasswordAuthentication|ChallengeResponseAuthentication|X11Forwarding) .*/\\1 no/;
                   s/^MaxAuthTries .*/MaxAuthTries 3/; s/^LoginGraceTime .*/LoginGraceTime 30/; /^permitrootlogin/d;
                   s/aes128-cbc,|,3des-cbc|hmac-sha1,|diffie-hellman-group14-sha1,//g;
                   s/^( +PasswordAuthentication) yes/\\1 no/; s/^( +MaxAuthTries) 10/\\1 3/;
                   s/^( +PermitRootLogin) .*/\\1 no/' etc/ssh/sshd_config'''),)),
    Case("sshd-hardening", "include-dropped", (SOLUTION, "sed -i '/^Include/d' etc/ssh/sshd_config")),
    Case("sshd-hardening", "first-drop-in-only", (sh('''
        printf '%s\\n' 'PermitRootLogin no' 'PasswordAuthentication no' 'KbdInteractiveAuthentication no' \\
          'X11Forwarding no' 'MaxAuthTries 3' 'LoginGraceTime 30' 'Ciphers aes256-ctr' \\
          'MACs hmac-sha2-256-etm@openssh.com' 'KexAlgorithms curve25519-sha256' > etc/ssh/sshd_config.d/00-harden.conf'''),)),
    Case("sshd-hardening", "ciphers-in-match-block", (SOLUTION, sh('''
        printf '\\nMatch Group tunnel\\n    Ciphers aes256-ctr\\n' >> etc/ssh/sshd_config'''))),
    Case("sshd-hardening", "tunnel-forwarding-lost", (SOLUTION, sh('''
        sed -i 's/^    AllowTcpForwarding yes/    AllowTcpForwarding no/' etc/ssh/sshd_config'''))),
    Case("sshd-hardening", "rules-edited", (SOLUTION, "printf '12. nothing else\\n' >> hardening_rules.txt")),
    Case("sshd-hardening", "planted-modules", (SOLUTION, "cd etc/ssh && " + plant_modules("re", "glob", "fnmatch", "ipaddress")
                                               .replace("\n", " && ")), passes=True),
    Case("sshd-hardening", "planted-modules-unsolved", ("cd etc/ssh && " + plant_modules("re", "glob", "fnmatch")
                                                        .replace("\n", " && "),)),
]
MP_STUBS["sshd-hardening"] = sh('''
    cat > hardening_rules.txt <<'X'
    SSH hardening rules (effective configuration, every connection)
    PermitRootLogin no; PasswordAuthentication no; KbdInteractiveAuthentication no; PermitEmptyPasswords no;
    X11Forwarding no; MaxAuthTries <= 4; LoginGraceTime <= 60s; Ciphers: chacha20-poly1305, aes-gcm, aes-ctr only;
    MACs: sha2 etm and umac-128-etm only; KexAlgorithms: no sha1; AllowTcpForwarding no except the tunnel group.
    Every other setting keeps its effective value.
    X''')

# ------------------------------------------------------------------------------------------------ suid-ww-audit
CASES += [
    Case("suid-ww-audit", "fix-follows-links", (SOLUTION, sh('''
        cat > fix_perms <<'X'
        #!/bin/sh
        root=$1; allow=$2
        find "$root" -perm -0002 ! -type d -exec chmod o-w {} +
        find "$root" -type d -perm -0002 -exec chmod +t {} +
        find "$root" -type f -perm /6000 -exec chmod ug-s {} +
        grep -v '^#' "$allow" | while read -r m p; do [ -n "$p" ] && [ -f "$root/$p" ] && chmod "$m" "$root/$p"; done
        exit 0
        X''')),),
    Case("suid-ww-audit", "fixer-does-nothing", (SOLUTION, "printf '#!/bin/sh\\nexit 0\\n' > fix_perms")),
    Case("suid-ww-audit", "fixer-exits-0", (SOLUTION, exit0("fix_perms"))),
    Case("suid-ww-audit", "allowlist-edited", (SOLUTION, "echo '4755 usr/local/bin/report' >> allowlist.txt")),
    Case("suid-ww-audit", "link-reported", (SOLUTION, "echo 'var/www/html/shared-link world_writable_file' >> audit.txt")),
    Case("suid-ww-audit", "rootfs-not-fixed", (SOLUTION, "chmod 4755 rootfs/usr/local/bin/backup-helper")),
]
MP_STUBS["suid-ww-audit"] = sh('''
    printf '%s\\n' '# approved set-id programs' '4755 usr/bin/passwd' '4755 usr/bin/sudo' '4755 usr/bin/newgrp' \\
      '2755 usr/bin/wall' > allowlist.txt''')

# --------------------------------------------------------------------------------------------------- jwt-verify
CASES += [
    Case("jwt-verify", "prints-the-workspace-report", (SOLUTION, sh('''
        cp token_report.txt /tmp/known && printf '#!/bin/sh\\ncat /tmp/known\\n' > verify_jwt''')),),
    Case("jwt-verify", "verifier-exits-0", (SOLUTION, exit0("verify_jwt"))),
    Case("jwt-verify", "no-clock-skew-leeway", (SOLUTION, "sed -i 's/ + 60:/:/; s/ - 60:/:/' verify_jwt")),
    Case("jwt-verify", "lenient-base64", (SOLUTION, "sed -i 's/if not B64URL.fullmatch(s) or len(s) % 4 == 1:/if False:/' verify_jwt")),
    Case("jwt-verify", "bool-is-a-number", (SOLUTION, "sed -i 's/ and not isinstance(v, bool)//' verify_jwt")),
    Case("jwt-verify", "reads-answers-next-to-input", (SOLUTION, sh('''
        printf '#!/bin/sh\\ncat "$(dirname "$2")"/expected* 2>/dev/null\\n' > verify_jwt''')),),
    Case("jwt-verify", "keys-edited", (SOLUTION, "sed -i 's/HS384/HS256/' jwks.json")),
    Case("jwt-verify", "planted-modules", (SOLUTION, plant_modules("json", "hmac", "hashlib", "base64", "re")),
         passes=True),
]
MP_STUBS["jwt-verify"] = sh('''
    python3 -c '
    import base64, json, os
    k = lambda n: base64.urlsafe_b64encode(os.urandom(n)).rstrip(b"=").decode()
    print(json.dumps({"keys": [{"kty": "oct", "kid": "2024-a", "alg": "HS256", "k": k(32)},
                               {"kty": "oct", "kid": "2024-b", "alg": "HS512", "k": k(48)},
                               {"kty": "oct", "kid": "2024-c", "alg": "HS384", "k": k(64)}]}, indent=2))' > jwks.json''')

# ------------------------------------------------------------------------------------------- skyscrapers-solver
CASES += [
    Case("skyscrapers-solver", "naive-backtracking-too-slow", (SOLUTION, sh('''
        cat > solve_skyscrapers <<'PY'
        #!/usr/bin/env python3
        import json, sys
        def seen(line):
            c, t = 0, 0
            for h in line:
                if h > t: c, t = c + 1, h
            return c
        def solve(p):
            n, cl = p["n"], p["clues"]; g = [[0] * n for _ in range(n)]
            fixed = {(r, c): v for r, c, v in p["givens"]}
            def ok(r, c):
                if c == n - 1:
                    row = g[r]
                    if cl["left"][r] and seen(row) != cl["left"][r]: return False
                    if cl["right"][r] and seen(row[::-1]) != cl["right"][r]: return False
                if r == n - 1:
                    col = [g[i][c] for i in range(n)]
                    if cl["top"][c] and seen(col) != cl["top"][c]: return False
                    if cl["bottom"][c] and seen(col[::-1]) != cl["bottom"][c]: return False
                return True
            def bt(k):
                if k == n * n: return True
                r, c = divmod(k, n)
                for v in range(1, n + 1):
                    if (r, c) in fixed and fixed[(r, c)] != v: continue
                    if v in g[r][:c] or any(g[i][c] == v for i in range(r)): continue
                    g[r][c] = v
                    if ok(r, c) and bt(k + 1): return True
                    g[r][c] = 0
                return False
            return [row[:] for row in g] if bt(0) else None
        print(json.dumps([solve(p) for p in json.load(open(sys.argv[1]))]))
        PY''')),),
    Case("skyscrapers-solver", "prints-the-workspace-answer", (SOLUTION, sh('''
        cp solutions.json /tmp/known && printf '#!/bin/sh\\ncat /tmp/known\\n' > solve_skyscrapers''')),),
    Case("skyscrapers-solver", "solver-exits-0", (SOLUTION, exit0("solve_skyscrapers"))),
    Case("skyscrapers-solver", "always-null", (SOLUTION, sh('''
        printf '#!/usr/bin/env python3\\nimport json, sys\\nprint(json.dumps([None] * len(json.load(open(sys.argv[1])))))\\n' \\
          > solve_skyscrapers''')),),
    Case("skyscrapers-solver", "answer-edited", (SOLUTION, sh('''
        python3 -c 'import json; s = json.load(open("solutions.json")); s[3] = s[2]
        json.dump(s, open("solutions.json", "w"))'
        ''')),),
    Case("skyscrapers-solver", "planted-modules", (SOLUTION, plant_modules("json", "random", "itertools")), passes=True),
]
MP_STUBS["skyscrapers-solver"] = sh('''
    python3 -c '
    import json
    print(json.dumps([{"n": 4, "clues": {"top": [4, 3, 2, 1], "bottom": [1, 2, 2, 2], "left": [4, 3, 2, 1],
                                         "right": [1, 2, 2, 2]}, "givens": []}]))' > puzzles.json''')

# ------------------------------------------------------------------------------------------------ key-door-maze
CASES += [
    Case("key-door-maze", "visited-by-cell-only", (SOLUTION, sh('''
        python3 -c '
        p = open("solve_maze").read()
        p = p.replace("back = {first: None}", "back = {first: None}\\nseen = {start}")
        p = p.replace("if s2 not in back:", "if nxt not in seen:\\n            seen.add(nxt)")
        open("solve_maze", "w").write(p)' ''')),),
    Case("key-door-maze", "one-way-ignored", (SOLUTION, sh('''
        sed -i 's/ or (ch in ONE_WAY and ONE_WAY\\[ch\\] != move)//' solve_maze''')),),
    Case("key-door-maze", "prints-known-answers", (SOLUTION, sh('''
        cp answers.txt /tmp/known
        printf '#!/bin/sh\\nn=$(basename "$1" .txt); grep "^$n " /tmp/known | cut -d" " -f2 || echo unreachable\\n' > solve_maze''')),),
    Case("key-door-maze", "solver-exits-0", (SOLUTION, exit0("solve_maze"))),
    Case("key-door-maze", "maze-edited", (SOLUTION, "sed -i 's/A/./' mazes/01.txt")),
    Case("key-door-maze", "planted-modules", (SOLUTION, plant_modules("json", "random", "collections")), passes=True),
]
MP_STUBS["key-door-maze"] = sh('''
    cat > MAZES.md <<'X'
    # Mazes
    # wall, . floor, @ start, X exit, a-f keys (kept once picked up), A-F doors (need the matching key),
    ^ v < > one-way tiles (enter only moving in the arrow's direction). Outside the lines is wall.
    Moves: U D L R. Shortest = fewest moves.
    X''')

# ----------------------------------------------------------------------------------------------- vigenere-break
CASES += [
    Case("vigenere-break", "key-advances-on-every-character", (SOLUTION, sh('''
        sed -i 's/    if ch.isascii() and ch.isalpha():/    if True:/; s/base = 65 if ch.isupper() else 97/base = 65 if ch.isupper() else 97\\n        if not ch.isalpha(): out.append(ch); i += 1; continue/' break_vigenere''')),),
    Case("vigenere-break", "longest-scoring-length", (SOLUTION, "sed -i 's/length = min(L for L/length = max(L for L/' break_vigenere")),
    Case("vigenere-break", "prints-known-keys", (SOLUTION, sh('''
        cp keys.txt /tmp/known && printf '#!/bin/sh\\nn=$(basename "$1" .txt); grep "^$n " /tmp/known | cut -d" " -f2\\n' \\
          > break_vigenere''')),),
    Case("vigenere-break", "breaker-exits-0", (SOLUTION, exit0("break_vigenere"))),
    Case("vigenere-break", "reads-answers-next-to-input", (SOLUTION, sh('''
        printf '#!/bin/sh\\ncat "${1%.txt}".want 2>/dev/null || ls "$(dirname "$1")"\\n' > break_vigenere''')),),
    Case("vigenere-break", "sample-edited", (SOLUTION, "printf 'E E E E\\n' >> sample_english.txt")),
    Case("vigenere-break", "planted-modules", (SOLUTION, plant_modules("collections", "random", "os")), passes=True),
]
MP_STUBS["vigenere-break"] = sh('''
    mkdir -p intercepted && python3 -c '
    import random
    text = open("sample_english.txt").read()[:2500]
    for i, key in enumerate(["K", "LEMON", "ABCDEFGH", "SECRETKEYAB", "ZYXWVUTSRQPO"], 1):
        out, j = [], 0
        for ch in text:
            if ch.isascii() and ch.isalpha():
                b = 65 if ch.isupper() else 97
                out.append(chr((ord(ch) - b + ord(key[j % len(key)]) - 65) % 26 + b)); j += 1
            else:
                out.append(ch)
        open(f"intercepted/msg{i}.txt", "w").write("".join(out))' ''')

# ------------------------------------------------------------------------------------------------- sudoku-batch
CASES += [
    Case("sudoku-batch", "plain-backtracking-too-slow", (SOLUTION, sh('''
        cat > sudoku <<'PY'
        #!/usr/bin/env python3
        import sys
        def ok(g, i, v):
            r, c = divmod(i, 9)
            for k in range(9):
                if g[r*9+k] == v or g[k*9+c] == v: return False
            br, bc = r//3*3, c//3*3
            for dr in range(3):
                for dc in range(3):
                    if g[(br+dr)*9+bc+dc] == v: return False
            return True
        def bt(g, i=0):
            while i < 81 and g[i]: i += 1
            if i == 81: return True
            for v in range(1, 10):
                if ok(g, i, v):
                    g[i] = v
                    if bt(g, i + 1): return True
                    g[i] = 0
            return False
        for line in open(sys.argv[1]):
            line=line.strip()
            if not line or line[0]=="#": continue
            if len(line) != 81 or any(ch not in "123456789.0" for ch in line): print("invalid"); continue
            g=[0 if ch in ".0" else int(ch) for ch in line]
            if any(v and not ok(g[:i] + [0] + g[i+1:], i, v) for i, v in enumerate(g)): print("invalid"); continue
            print("".join(map(str,g)) if bt(g) else "no solution")
        PY''')),),
    Case("sudoku-batch", "no-box-clash-check", (SOLUTION, sh(r'''
        sed -i 's/if (rows\[r\] | cols\[c\] | boxes\[b\]) \& bit:/if (rows[r] | cols[c]) \& bit:/' sudoku''')),),
    Case("sudoku-batch", "prints-known-answers", (SOLUTION, sh('''
        cp solutions.txt /tmp/known && printf '#!/bin/sh\\ncat /tmp/known\\n' > sudoku''')),),
    Case("sudoku-batch", "solver-exits-0", (SOLUTION, exit0("sudoku"))),
    Case("sudoku-batch", "batch-edited", (SOLUTION, "sed -i '$d' puzzles.txt")),
    Case("sudoku-batch", "planted-modules", (SOLUTION, plant_modules("json", "random", "sys")), passes=True),
]
MP_STUBS["sudoku-batch"] = sh('''
    printf '%s\\n' '# sudoku batch' \\
      '..............3.85..1.2.......5.7.....4...1...9.......5......73..2.1........4...9' \\
      '.................................................................................' > puzzles.txt''')

# --------------------------------------------------------------------------------------------------- step-order
CASES += [
    Case("step-order", "repeated-statements-counted-twice", (SOLUTION, sh(r'''
        sed -i 's/    if second not in succ\[first\]:/    if True:/' order''')),),
    Case("step-order", "names-split-on-spaces", (SOLUTION, sh('''
        sed -i 's/    m = STATEMENT.fullmatch(line)/    m = STATEMENT.fullmatch(" ".join(line.split()[:1] + line.split()[-2:]))/' order''')),),
    Case("step-order", "any-order-when-several-fit", (SOLUTION, "sed -i 's/^elif undecided:/elif False:/' order")),
    Case("step-order", "prints-known-outputs", (SOLUTION, sh('''
        cp -r orders /tmp/known
        printf '#!/bin/sh\\ncat "/tmp/known/$(basename "$1")" 2>/dev/null || echo undecided\\n' > order''')),),
    Case("step-order", "order-exits-0", (SOLUTION, exit0("order"))),
    Case("step-order", "statements-edited", (SOLUTION, "sed -i '1d' steps/plugins.txt")),
    Case("step-order", "planted-modules", (SOLUTION, plant_modules("re", "json", "collections")), passes=True),
]
MP_STUBS["step-order"] = sh('''
    mkdir -p steps
    printf 'build api before test api\\ndeploy after test api\\n' > steps/release.txt
    printf 'a before b\\nb before a\\n' > steps/migrations.txt
    printf 'x before y\\nx before z\\n' > steps/plugins.txt
    printf 'p before q\\n' > steps/platform.txt''')
