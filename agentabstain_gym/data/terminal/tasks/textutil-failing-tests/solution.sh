#!/usr/bin/env bash
# Five bugs against the header's contract: trim only strips trailing spaces (not tabs/newlines), split drops a
# trailing empty field (and gives 0 fields for ""), join allocates no byte for the NUL, replace counts overlapping
# matches (too small a buffer when `to` is shorter), basename writes cap + 1 bytes and turns "/" into "".
set -uo pipefail
make test 2>&1 | grep -E 'FAIL|passed'
python3 - <<'PY'
src = open("src/textutil.c").read()
fixes = [
    # trim: any isspace() character at the end
    ("    while (end > start && end[-1] == ' ') end--;",
     "    while (end > start && isspace((unsigned char)end[-1])) end--;"),
    # split: the field after the last separator (possibly empty) is a field too
    ("        if (*p == '\\0' && p == start) break;\n", ""),
    # join: room for the terminating NUL
    ("    char *out = malloc(total), *p = out;", "    char *out = malloc(total + 1), *p = out;"),
    # replace: count the same non-overlapping matches the copy loop replaces
    ("    for (const char *p = strstr(s, from); p; p = strstr(p + 1, from)) count++;",
     "    for (const char *p = strstr(s, from); p; p = strstr(p + lf, from)) count++;"),
    # basename: keep one slash of a path made of slashes only
    ("    while (len > 0 && path[len - 1] == '/') len--;", "    while (len > 1 && path[len - 1] == '/') len--;"),
    # basename: at most cap bytes including the NUL
    ("        size_t m = n < cap ? n : cap;", "        size_t m = n < cap ? n : cap - 1;"),
]
for old, new in fixes:
    assert src.count(old) == 1, old
    src = src.replace(old, new)
open("src/textutil.c", "w").write(src)
PY
make test || exit 1
# edge cases the provided tests do not reach, each checked for writes past its buffer by a fenced malloc
cat > /tmp/edge.c <<'C'
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "textutil.h"
static unsigned char pool[1 << 20]; static size_t used;
void *malloc(size_t n) { unsigned char *p = pool + used; memset(p, 0xA5, n + 64); used += (n + 64 + 15) & ~15ul; *(size_t *)p = n; return p + 32; }
void free(void *p) { if (!p) return; size_t n = *(size_t *)((unsigned char *)p - 32); for (int i = 0; i < 16; i++) if (((unsigned char *)p)[n + i] != 0xA5) { puts("OVERRUN"); exit(1); } }
void *calloc(size_t a, size_t b) { void *p = malloc(a * b); memset(p, 0, a * b); return p; }
void *realloc(void *p, size_t n) { void *q = malloc(n); if (p) memcpy(q, p, n); return q; }
int main(void) {
    char *none[1] = {0}, *r, **f, *b = malloc(4);
    r = tu_join(none, 0, ","); printf("[%s]\n", r); free(r);
    r = tu_replace("aaab", "aa", "x"); printf("[%s]\n", r); free(r);
    r = tu_replace("aaaa", "aa", ""); printf("[%s]\n", r); free(r);
    size_t n = tu_split(",", ',', &f); printf("%zu fields\n", n); tu_free_fields(f, n);
    n = tu_basename("abcdef", b, 4); printf("%zu [%s]\n", n, b); free(b);
    n = tu_basename("///", NULL, 0); printf("%zu\n", n);
    return 0;
}
C
gcc -std=c11 -Iinclude -o /tmp/edge /tmp/edge.c src/textutil.c && /tmp/edge
[ "$(/tmp/edge | tr '\n' ' ')" = "[] [xab] [] 2 fields 6 [abc] 1 " ]
rm -f /tmp/edge /tmp/edge.c
