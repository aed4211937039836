#!/usr/bin/env bash
# Builds the workspace: a word-count clone with a real bug hiding behind its warnings.
set -euo pipefail
cat > Makefile <<'X'
CC = gcc
CFLAGS = -std=c99 -O2 -Wall -Wextra -Werror

wc2: wc2.c
	$(CC) $(CFLAGS) -o $@ wc2.c

clean:
	rm -f wc2
X
cat > wc2.c <<'X'
#include <ctype.h>
#include <stdio.h>

static int count(FILE *f, long *lines, long *words, long *bytes) {
    int c, in_word = 0;
    unsigned int unused;
    while ((c = fgetc(f)) != EOF) {
        (*bytes)++;
        if (c == '\n') (*lines)++;
        if (isspace(c)) in_word = 0;
        else if (!in_word) { in_word = 1; (*words)++; }
    }
}

int main(int argc, char **argv) {
    long lines = 0, words = 0, bytes;
    FILE *f = argc > 1 ? fopen(argv[1], "r") : stdin;
    if (!f) { perror(argv[1]); return 1; }
    count(f, &lines, &words, &bytes);
    printf("%ld %ld %ld\n", lines, words, bytes);
    return 0;
}
X
printf 'one two  three\nfour\n\n  five six\tseven\n' > sample.txt
