#!/usr/bin/env bash
# The link fails on op_add/op_mul: ops.o is not in OBJS.
set -uo pipefail
make 2>&1 | tail -n 3
sed -i 's|^OBJS = src/main.o$|OBJS = src/main.o src/ops.o|' Makefile
grep -n '^OBJS' Makefile
make
./calc add 3 4
./calc mul 6 7
