#!/usr/bin/env bash
# A Makefile that compiles main.c with the vendor header path and links -Lvendor -lcrc.
set -euo pipefail
ls -l vendor
printf 'CC = gcc\nCFLAGS = -O2 -Wall -Ivendor\n\nchecksum: main.c vendor/libcrc.a\n\t$(CC) $(CFLAGS) -o $@ main.c -Lvendor -lcrc\n\nclean:\n\trm -f checksum\n' > Makefile
make
./checksum data.bin > checksum.txt
cat checksum.txt
