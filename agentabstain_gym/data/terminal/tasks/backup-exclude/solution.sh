#!/usr/bin/env bash
# GNU tar exclude patterns match at any depth; list the result to check it.
set -euo pipefail
find project -type f | sort
tar --exclude='node_modules' --exclude='*.log' --exclude='project/.cache' -czf backup.tar.gz project
tar tzf backup.tar.gz | sort
gzip -t backup.tar.gz
