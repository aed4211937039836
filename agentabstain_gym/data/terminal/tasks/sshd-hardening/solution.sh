#!/usr/bin/env bash
# sshd keeps the first value it reads for a keyword, and the drop-ins are included (line 2) before the main file's
# settings, so every file is rewritten: each rule keyword gets a compliant value wherever it appears (global part,
# drop-ins and Match blocks), algorithm lists keep only allowed entries, and nothing else changes.
set -euo pipefail
cat hardening_rules.txt
head -50 etc/ssh/sshd_config etc/ssh/sshd_config.d/*.conf
cat > /tmp/harden.py <<'PY'
import re
import sys

NO = {"permitrootlogin", "passwordauthentication", "kbdinteractiveauthentication",
      "challengeresponseauthentication", "permitemptypasswords", "x11forwarding"}
CIPHERS = "chacha20-poly1305@openssh.com aes256-gcm@openssh.com aes128-gcm@openssh.com aes256-ctr aes192-ctr aes128-ctr".split()
MACS = "hmac-sha2-512-etm@openssh.com hmac-sha2-256-etm@openssh.com umac-128-etm@openssh.com".split()

for path in sys.argv[1:]:
    out, seen_global = [], set()
    for line in open(path).read().split("\n"):
        m = re.match(r"(\s*)([A-Za-z0-9]+)(\s+|\s*=\s*)(.*)$", line)
        if not m or line.lstrip().startswith("#"):
            out.append(line)
            continue
        indent, key, sep, val = m.groups()
        k = key.lower()
        if k == "match":
            seen_global = None  # from here on, Match blocks: no de-duplication
        if seen_global is not None and k in seen_global and k in NO | {"maxauthtries", "logingracetime"}:
            continue  # a later duplicate in the global part is never used: drop it to avoid confusion
        if seen_global is not None:
            seen_global.add(k)
        if k == "challengeresponseauthentication":
            key = "KbdInteractiveAuthentication"
        if k in NO:
            val = "no"
        elif k == "maxauthtries":
            val = str(min(int(val), 3))
        elif k == "logingracetime":
            val = "30"
        elif k == "ciphers":
            val = ",".join(c for c in val.split(",") if c in CIPHERS)
        elif k == "macs":
            val = ",".join(c for c in val.split(",") if c in MACS)
        elif k == "kexalgorithms":
            val = ",".join(c for c in val.split(",") if "sha1" not in c)
        out.append(f"{indent}{key}{sep}{val}")
    open(path, "w").write("\n".join(out))
PY
python3 /tmp/harden.py etc/ssh/sshd_config etc/ssh/sshd_config.d/*.conf
rm -f /tmp/harden.py
grep -rniE 'permitroot|password|kbdinter|x11|maxauth|logingrace|ciphers|macs|kex|tcpforw' etc/ssh
