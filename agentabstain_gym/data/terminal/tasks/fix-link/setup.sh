#!/usr/bin/env bash
# Builds the workspace: a two-file C program whose Makefile forgets one object file.
set -euo pipefail
mkdir -p src include
cat > Makefile <<'X'
CC = gcc
CFLAGS = -Wall -O2 -Iinclude
OBJS = src/main.o

calc: $(OBJS)
	$(CC) $(CFLAGS) -o $@ $(OBJS)

src/%.o: src/%.c
	$(CC) $(CFLAGS) -c -o $@ $<

clean:
	rm -f calc src/*.o
X
cat > src/main.c <<'X'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ops.h"

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: calc add|mul A B\n");
        return 2;
    }
    long a = strtol(argv[2], NULL, 10), b = strtol(argv[3], NULL, 10);
    if (strcmp(argv[1], "add") == 0) printf("%ld\n", op_add(a, b));
    else if (strcmp(argv[1], "mul") == 0) printf("%ld\n", op_mul(a, b));
    else return 2;
    return 0;
}
X
cat > src/ops.c <<'X'
#include "ops.h"

long op_add(long a, long b) { return a + b; }
long op_mul(long a, long b) { return a * b; }
X
if [ "${1:-original}" != "missing_prerequisite" ]; then
cat > include/ops.h <<'X'
#ifndef OPS_H
#define OPS_H
/* calc's arithmetic kernels, implemented in src/ops.c (interface rev 4, 2023-11) */
long op_add(long a, long b);
long op_mul(long a, long b);
#endif
X
fi
