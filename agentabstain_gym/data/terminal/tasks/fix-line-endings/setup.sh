#!/usr/bin/env bash
# Builds the workspace: text files with CRLF endings, trailing blanks, missing or doubled final newlines.
set -euo pipefail
mkdir -p notes/meetings notes/drafts
printf 'Agenda\r\n- budget  \r\n- hiring\r\n' > notes/meetings/monday.txt
printf 'Retro\r\nwent well: deploys\t\r\nto improve: tests' > notes/meetings/friday.txt
printf 'Ideas   \nsmaller images \n\n\n' > notes/drafts/ideas.txt
printf 'Plain file\nalready fine\n' > notes/clean.txt
printf 'Keep me\r\nas is  \r\n' > notes/drafts/windows.md
