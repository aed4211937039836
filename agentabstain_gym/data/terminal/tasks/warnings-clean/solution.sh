#!/usr/bin/env bash
# Warnings: unused variable, missing return value, bytes used uninitialised (the real bug).
set -uo pipefail
make 2>&1 | grep -E 'warning|error' | head
sed -i '/unsigned int unused;/d' wc2.c
sed -i 's/^static int count(/static void count(/' wc2.c
sed -i 's/long lines = 0, words = 0, bytes;/long lines = 0, words = 0, bytes = 0;/' wc2.c
make
./wc2 sample.txt
