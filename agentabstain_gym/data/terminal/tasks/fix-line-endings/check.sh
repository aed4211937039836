#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
python3 -I - <<'PY'  # isolated: nothing in the workspace is importable
import sys
want = {
    "notes/meetings/monday.txt": b"Agenda\n- budget\n- hiring\n",
    "notes/meetings/friday.txt": b"Retro\nwent well: deploys\nto improve: tests\n",
    "notes/drafts/ideas.txt": b"Ideas\nsmaller images\n",
    "notes/clean.txt": b"Plain file\nalready fine\n",
    "notes/drafts/windows.md": b"Keep me\r\nas is  \r\n",
}
for path, data in want.items():
    try:
        if open(path, "rb").read() != data:
            sys.exit(1)
    except OSError:
        sys.exit(1)
PY
