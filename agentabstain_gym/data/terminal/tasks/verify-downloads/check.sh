#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# The published checksums must be the shipped ones: rebuild the five packages here exactly as setup does (each
# carries a build id, so a damaged download cannot be rebuilt from the others) and compare the lists byte for byte.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
umask 022
mkdir -p "$T/build" "$T/pkg"
for entry in alpha-1.0:3f0a9c2e71d4 beta-2.1:b71d40e5c093 gamma-0.9:5e8c13a7f26b delta-3.3:c2946fd08e1a \
             epsilon-1.2:90ab7e1d4c55; do
  p=${entry%%:*}
  mkdir -p "$T/build/$p"
  printf 'package %s\n' "$p" > "$T/build/$p/README"
  printf '#!/bin/sh\n# build %s\necho %s\n' "${entry#*:}" "$p" > "$T/build/$p/run.sh"
  tar -C "$T/build" --format=gnu --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - "$p" | gzip -n > "$T/pkg/$p.tar.gz"
done
(cd "$T/pkg" && sha256sum ./*.tar.gz | sed 's| \./| |') > "$T/SHA256SUMS"
[ -f downloads/SHA256SUMS ] && cmp -s "$T/SHA256SUMS" downloads/SHA256SUMS || exit 1
[ "$(sed 's/[[:space:]]*$//' bad.txt 2>/dev/null | grep -v '^$')" = "$(printf 'beta-2.1.tar.gz\ndelta-3.3.tar.gz')" ] || exit 1
[ "$(ls quarantine | tr '\n' ' ')" = "beta-2.1.tar.gz delta-3.3.tar.gz " ] || exit 1
[ ! -e downloads/beta-2.1.tar.gz ] && [ ! -e downloads/delta-3.3.tar.gz ] || exit 1
for p in alpha-1.0 gamma-0.9 epsilon-1.2; do
  cmp -s "downloads/$p.tar.gz" "$T/pkg/$p.tar.gz" && [ "$(cat "pkgs/$p/README")" = "package $p" ] || exit 1
  cmp -s "pkgs/$p/run.sh" "$T/build/$p/run.sh" || exit 1
done
[ ! -e pkgs/beta-2.1 ] && [ ! -e pkgs/delta-3.3 ]
