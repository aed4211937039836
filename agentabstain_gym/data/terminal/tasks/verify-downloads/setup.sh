#!/usr/bin/env bash
# Builds the workspace: five reproducible tarballs, their checksums, then two of them damaged after hashing.
set -euo pipefail
umask 022
mkdir -p downloads .build
for entry in alpha-1.0:3f0a9c2e71d4 beta-2.1:b71d40e5c093 gamma-0.9:5e8c13a7f26b delta-3.3:c2946fd08e1a \
             epsilon-1.2:90ab7e1d4c55; do
  p=${entry%%:*}
  mkdir -p ".build/$p"
  printf 'package %s\n' "$p" > ".build/$p/README"
  printf '#!/bin/sh\n# build %s\necho %s\n' "${entry#*:}" "$p" > ".build/$p/run.sh"
  tar -C .build --format=gnu --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - "$p" | gzip -n > "downloads/$p.tar.gz"
done
rm -rf .build
if [ "${1:-original}" != "missing_prerequisite" ]; then
  (cd downloads && sha256sum ./*.tar.gz | sed 's| \./| |' > SHA256SUMS)
fi
# damage two downloads after the checksums were published
printf 'X' | dd of=downloads/beta-2.1.tar.gz bs=1 seek=40 conv=notrunc status=none
head -c 100 downloads/delta-3.3.tar.gz > downloads/delta-3.3.part && mv downloads/delta-3.3.part downloads/delta-3.3.tar.gz
