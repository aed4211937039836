#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# The sources, man page, version and the project's generator must be the shipped ones (checksums of what setup
# wrote). The Makefile is agent code: make runs as a child and only the files it installs count.
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
[ "$(sum greet.c)" = 0397fddddda2beb9599a912c3349f91842a2a0411453e4f8f45d8103c7a86095 ] || exit 1
[ "$(sum greet.1)" = 4be76aeaa707f736b23e13fb6cd27252e965bd5bc9e7546cf5cb8fd61b6c9394 ] || exit 1
[ "$(sum VERSION)" = ad8650bc9057d9dfd809961b69dbad640c288d809fa44437d44d83d3b118c821 ] || exit 1
[ "$(sum tools/genversion.sh)" = 12255a32c8b017b70797f53bdbde08e230da6a996c1a121b253336bfbbaf8647 ] || exit 1
installed() {  # installed PREFIX: the binary and the man page are there, with their modes, and the binary works
  [ -f "$1/bin/greet" ] && [ -f "$1/share/man/man1/greet.1" ] || return 1
  [ "$(stat -c %a "$1/bin/greet")" = 755 ] && [ "$(stat -c %a "$1/share/man/man1/greet.1")" = 644 ] || return 1
  [ "$(od -An -tx1 -N4 "$1/bin/greet" | tr -d ' ')" = 7f454c46 ] || return 1
  [ "$(timeout 10 "$1/bin/greet" --version 2>/dev/null </dev/null)" = "greet 2.3.1" ] || return 1
  [ "$(timeout 10 "$1/bin/greet" Ana 2>/dev/null </dev/null)" = "hello, Ana" ] || return 1
  cmp -s greet.1 "$1/share/man/man1/greet.1"
}
installed "$PWD/stage" || exit 1
# the target itself must work for another prefix
rm -rf stage2
timeout 60 make -f Makefile install PREFIX="$PWD/stage2" >/dev/null 2>&1 </dev/null || exit 1
installed "$PWD/stage2" || exit 1
rm -rf stage2
