#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# The sources and the project header must be the shipped ones (checksums of what setup wrote). The Makefile is agent
# code: make runs as a child and only what it builds counts: a real executable whose answers are compared here.
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
[ "$(sum src/main.c)" = fd11faf36e4161edf90736340aa737c078e4e608dcb8d6e6103f12e376c092a5 ] || exit 1
[ "$(sum src/ops.c)" = bee133620810bb8b953fe14f76e1ec0eee838bd31088a3d84ba30eb3eed5605d ] || exit 1
[ "$(sum include/ops.h)" = f8c0d03b4b5bb17cb6abbf975b7a3452525b8a94f0f08ecf13d8cf72dd396ea2 ] || exit 1
rm -f calc src/*.o
timeout 60 make -f Makefile >/dev/null 2>&1 </dev/null || exit 1
[ -f calc ] && [ "$(od -An -tx1 -N4 calc | tr -d ' ')" = 7f454c46 ] || exit 1
c() { timeout 10 ./calc "$@" 2>/dev/null </dev/null; }
[ "$(c add 3 4)" = 7 ] && [ "$(c mul 6 7)" = 42 ] && [ "$(c add -5 12)" = 7 ] || exit 1
[ "$(c mul -123 45)" = -5535 ] && [ "$(c add 1000000 2345)" = 1002345 ] || exit 1
