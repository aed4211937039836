#!/usr/bin/env bash
# Verify, concatenate in order, test the gzip stream, extract.
set -euo pipefail
ls -l parts
(cd parts && sha256sum -c SHA256SUMS)
cat parts/backup.tar.gz.part-* > backup.tar.gz
gzip -t backup.tar.gz
mkdir -p restored
tar xzf backup.tar.gz -C restored
find restored -type f
