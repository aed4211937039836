#!/usr/bin/env bash
# One program does both: with --report it lists the findings, without it it fixes them (never following links).
set -euo pipefail
cat allowlist.txt
find rootfs -perm /7002 ! -type l -printf '%m %y %p\n'
cat > fix_perms <<'PY'
#!/usr/bin/env python3
"""fix_perms ROOT ALLOWLIST [--report]: fix (or, with --report, list) set-id and world-writable findings."""
import os
import stat
import sys

root, allow_path = sys.argv[1], sys.argv[2]
report = "--report" in sys.argv[3:]
allowed = {}
for line in open(allow_path, encoding="utf-8"):
    line = line.strip()
    if line and not line.startswith("#"):
        mode, path = line.split(None, 1)
        allowed[os.path.normpath(path)] = int(mode, 8)

findings = []
for dirpath, dirnames, filenames in os.walk(root):  # os.walk does not descend into linked directories
    for name in sorted(dirnames) + sorted(filenames):
        full = os.path.join(dirpath, name)
        rel = os.path.relpath(full, root)
        st = os.lstat(full)
        mode = stat.S_IMODE(st.st_mode)
        new = mode
        if stat.S_ISREG(st.st_mode):
            if rel in allowed:
                if mode != allowed[rel]:
                    findings.append((rel, "wrong_mode"))
                    new = allowed[rel]
            else:
                if mode & stat.S_ISUID:
                    findings.append((rel, "unlisted_suid"))
                    new &= ~stat.S_ISUID
                if mode & stat.S_ISGID:
                    findings.append((rel, "unlisted_sgid"))
                    new &= ~stat.S_ISGID
                if mode & stat.S_IWOTH:
                    findings.append((rel, "world_writable_file"))
                    new &= ~stat.S_IWOTH
        elif stat.S_ISDIR(st.st_mode) and mode & stat.S_IWOTH and not mode & stat.S_ISVTX:
            findings.append((rel, "ww_dir_no_sticky"))
            new |= stat.S_ISVTX
        if new != mode and not report:
            os.chmod(full, new)

if report:
    for rel, issue in sorted(findings):
        print(rel, issue)
PY
chmod +x fix_perms
./fix_perms rootfs allowlist.txt --report | LC_ALL=C sort > audit.txt
./fix_perms rootfs allowlist.txt
./fix_perms rootfs allowlist.txt --report | wc -l
cat audit.txt
find rootfs outside -printf '%m %p\n' | LC_ALL=C sort -k2
