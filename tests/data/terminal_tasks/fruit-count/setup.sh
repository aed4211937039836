#!/usr/bin/env bash
set -eu
mkdir -p archive
printf 'old apple\n' > archive/old.txt
if [ "${1:-original}" != "missing_prerequisite" ]; then
  printf 'Apple pie\nbanana bread\napple juice\npear\nAPPLE crumble\n' > notes.txt
fi
