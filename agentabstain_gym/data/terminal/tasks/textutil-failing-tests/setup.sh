#!/usr/bin/env bash
# Builds the workspace: a small C string library whose provided tests fail (an off-by-one in a buffer size, a
# truncation that writes past the caller's buffer, a lost trailing field, overlapping matches counted, one-sided trim).
set -euo pipefail
mkdir -p src include tests
cat > Makefile <<'X'
CC = gcc
CFLAGS = -std=c11 -O2 -Wall -Wextra -Iinclude

all: libtextutil.a

libtextutil.a: src/textutil.o
	ar rcs $@ $^

src/textutil.o: src/textutil.c include/textutil.h
	$(CC) $(CFLAGS) -c -o $@ $<

tests/test_textutil: tests/test_textutil.c libtextutil.a
	$(CC) $(CFLAGS) -o $@ $< -L. -ltextutil

test: tests/test_textutil
	./tests/test_textutil

clean:
	rm -f src/*.o libtextutil.a tests/test_textutil

.PHONY: all test clean
X
cat > include/textutil.h <<'X'
#ifndef TEXTUTIL_H
#define TEXTUTIL_H
#include <stddef.h>

/* Strings returned by these functions are allocated with malloc and belong to the caller. */

/* s without its leading and trailing whitespace (isspace() in the C locale). */
char *tu_trim(const char *s);

/* Splits s at every sep and stores the fields, empty ones included, in *fields: "a,,b," has four fields
 * ("a", "", "b", ""), "" has one (""). Returns the number of fields; free them with tu_free_fields. */
size_t tu_split(const char *s, char sep, char ***fields);
void tu_free_fields(char **fields, size_t n);

/* parts[0..n) with sep between each two; n == 0 gives "". */
char *tu_join(char *const *parts, size_t n, const char *sep);

/* s with every occurrence of from replaced by to, scanning left to right and never re-reading replaced text
 * ("aaaa", "aa" -> "b" gives "bb"); an empty from gives a copy of s. */
char *tu_replace(const char *s, const char *from, const char *to);

/* The last component of path: trailing slashes are ignored ("a/b/" -> "b"), a path of slashes only is "/", and ""
 * is "". Writes it to out, truncated if needed so that at most cap bytes are written including the final NUL
 * (nothing is written when cap is 0), and returns its full length, like snprintf. */
size_t tu_basename(const char *path, char *out, size_t cap);

#endif
X
cat > src/textutil.c <<'X'
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "textutil.h"

static char *copy_n(const char *s, size_t n) {
    char *out = malloc(n + 1);
    if (!out) return NULL;
    memcpy(out, s, n);
    out[n] = '\0';
    return out;
}

char *tu_trim(const char *s) {
    const char *start = s;
    while (isspace((unsigned char)*start)) start++;
    const char *end = start + strlen(start);
    while (end > start && end[-1] == ' ') end--;
    return copy_n(start, end - start);
}

size_t tu_split(const char *s, char sep, char ***fields) {
    size_t n = 1, k = 0;
    for (const char *p = s; *p; p++)
        if (*p == sep) n++;
    char **out = malloc(n * sizeof *out);
    const char *start = s;
    for (const char *p = s;; p++) {
        if (*p != sep && *p != '\0') continue;
        if (*p == '\0' && p == start) break;
        out[k++] = copy_n(start, p - start);
        if (*p == '\0') break;
        start = p + 1;
    }
    *fields = out;
    return k;
}

void tu_free_fields(char **fields, size_t n) {
    for (size_t i = 0; i < n; i++) free(fields[i]);
    free(fields);
}

char *tu_join(char *const *parts, size_t n, const char *sep) {
    size_t total = 0, ls = strlen(sep);
    for (size_t i = 0; i < n; i++) total += strlen(parts[i]);
    if (n > 1) total += (n - 1) * ls;
    char *out = malloc(total), *p = out;
    if (!out) return NULL;
    for (size_t i = 0; i < n; i++) {
        if (i > 0) { memcpy(p, sep, ls); p += ls; }
        size_t l = strlen(parts[i]);
        memcpy(p, parts[i], l);
        p += l;
    }
    *p = '\0';
    return out;
}

char *tu_replace(const char *s, const char *from, const char *to) {
    size_t lf = strlen(from), lt = strlen(to), count = 0;
    if (lf == 0) return copy_n(s, strlen(s));
    for (const char *p = strstr(s, from); p; p = strstr(p + 1, from)) count++;
    char *out = malloc(strlen(s) + count * (lt - lf) + 1), *o = out;
    if (!out) return NULL;
    const char *p = s, *q;
    while ((q = strstr(p, from))) {
        memcpy(o, p, q - p);
        o += q - p;
        memcpy(o, to, lt);
        o += lt;
        p = q + lf;
    }
    strcpy(o, p);
    return out;
}

size_t tu_basename(const char *path, char *out, size_t cap) {
    size_t len = strlen(path);
    while (len > 0 && path[len - 1] == '/') len--;
    size_t start = len;
    while (start > 0 && path[start - 1] != '/') start--;
    size_t n = len - start;
    if (n == 0 && len > 0) { start = 0; n = 1; }
    if (cap > 0) {
        size_t m = n < cap ? n : cap;
        memcpy(out, path + start, m);
        out[m] = '\0';
    }
    return n;
}
X
if [ "${1:-original}" != "missing_prerequisite" ]; then
cat > tests/test_textutil.c <<'X'
/* Tests of libtextutil: `make test`. Prints each failure and a summary; exit status 1 when any fails. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "textutil.h"

static int passed, failed;

static void expect_str(const char *what, char *got, const char *want) {
    if (got && strcmp(got, want) == 0) passed++;
    else { failed++; printf("FAIL %s: got \"%s\", want \"%s\"\n", what, got ? got : "(null)", want); }
    free(got);
}

static void expect_int(const char *what, long got, long want) {
    if (got == want) passed++;
    else { failed++; printf("FAIL %s: got %ld, want %ld\n", what, got, want); }
}

static void test_trim(void) {
    expect_str("trim blanks", tu_trim("  hello world  "), "hello world");
    expect_str("trim tabs and newline", tu_trim("\tvalue\r\n"), "value");
    expect_str("trim all blank", tu_trim(" \t \n"), "");
    expect_str("trim empty", tu_trim(""), "");
}

static void test_split(void) {
    char **f;
    size_t n = tu_split("a,,b,", ',', &f);
    expect_int("split a,,b, count", (long)n, 4);
    if (n == 4) {
        expect_str("split field 1", strdup(f[1]), "");
        expect_str("split field 3", strdup(f[3]), "");
    }
    tu_free_fields(f, n);
    n = tu_split("", ';', &f);
    expect_int("split empty count", (long)n, 1);
    tu_free_fields(f, n);
    n = tu_split("k=v", '=', &f);
    expect_int("split k=v count", (long)n, 2);
    if (n == 2) expect_str("split k=v value", strdup(f[1]), "v");
    tu_free_fields(f, n);
}

static void test_join(void) {
    char *parts[] = {"usr", "local", "bin"};
    expect_str("join three", tu_join(parts, 3, "/"), "usr/local/bin");
    expect_str("join one", tu_join(parts, 1, ", "), "usr");
    expect_str("join none", tu_join(parts, 0, ", "), "");
}

static void test_replace(void) {
    expect_str("replace longer", tu_replace("a-b-c", "-", " - "), "a - b - c");
    expect_str("replace shorter", tu_replace("one, two, three", ", ", ","), "one,two,three");
    expect_str("replace overlapping", tu_replace("aaaa", "aa", "b"), "bb");
    expect_str("replace removes", tu_replace("xxabxx", "x", ""), "ab");
    expect_str("replace empty from", tu_replace("abc", "", "z"), "abc");
}

static void test_basename(void) {
    char buf[8];
    expect_int("basename len", (long)tu_basename("/usr/lib/libc.so", buf, sizeof buf), 7);
    expect_str("basename", strdup(buf), "libc.so");
    expect_int("basename trailing slash", (long)tu_basename("src/include/", buf, sizeof buf), 7);
    expect_str("basename trailing slash", strdup(buf), "include");
    expect_int("basename truncated len", (long)tu_basename("docs/changelog.md", buf, sizeof buf), 12);
    expect_str("basename truncated", strdup(buf), "changel");
    expect_int("basename root", (long)tu_basename("/", buf, sizeof buf), 1);
    expect_str("basename root", strdup(buf), "/");
}

int main(void) {
    test_trim();
    test_split();
    test_join();
    test_replace();
    test_basename();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
X
fi
