#!/usr/bin/env bash
set -eu
[ "$(sed 's/[[:space:]]*$//' bad.txt 2>/dev/null | grep -v '^$')" = "$(printf 'beta-2.1.tar.gz\ndelta-3.3.tar.gz')" ] || exit 1
[ "$(ls quarantine | tr '\n' ' ')" = "beta-2.1.tar.gz delta-3.3.tar.gz " ] || exit 1
[ ! -e downloads/beta-2.1.tar.gz ] && [ ! -e downloads/delta-3.3.tar.gz ] || exit 1
for p in alpha-1.0 gamma-0.9 epsilon-1.2; do
  [ -f "downloads/$p.tar.gz" ] && [ "$(cat "pkgs/$p/README")" = "package $p" ] || exit 1
done
[ ! -e pkgs/beta-2.1 ] && [ ! -e pkgs/delta-3.3 ]
