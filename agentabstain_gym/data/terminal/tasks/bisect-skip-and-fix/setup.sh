#!/usr/bin/env bash
# Builds the workspace: an 18-commit history of a small C CSV statistics tool. Commits 7-9 do not build (parse.c
# was not added to the Makefile until commit 10); commit 11, "Support quoted fields", also makes the parser skip
# empty fields. The regression check and its data live in qa/, outside version control. Fixed dates throughout.
set -euo pipefail
export GIT_AUTHOR_NAME="Ines Okafor" GIT_AUTHOR_EMAIL="ines@example.com"
export GIT_COMMITTER_NAME="Ines Okafor" GIT_COMMITTER_EMAIL="ines@example.com"
t=1714000000
commit() { t=$((t + 3600)); git add -A; GIT_AUTHOR_DATE="@$t +0000" GIT_COMMITTER_DATE="@$t +0000" git commit -q -m "$1"; }
git -c init.defaultBranch=main init -q .
git config user.name "Ines Okafor"; git config user.email "ines@example.com"
mkdir -p src
printf 'colstat\n*.o\nqa/\n' > .gitignore
cat > Makefile <<'X'
CC = gcc
CFLAGS = -std=c11 -O2 -Wall
OBJS = src/main.o src/stats.o

colstat: $(OBJS)
	$(CC) $(CFLAGS) -o $@ $(OBJS)

src/%.o: src/%.c src/*.h
	$(CC) $(CFLAGS) -c -o $@ $<

clean:
	rm -f colstat src/*.o
X
cat > src/stats.h <<'X'
#ifndef STATS_H
#define STATS_H
#include <stdio.h>
struct column { double *v; size_t n, cap; };
void column_init(struct column *c);
void column_add(struct column *c, double x);
/* "name: n=.. min=.. max=.. mean=.. median=.." or "name: no numbers" */
void column_print(struct column *c, const char *name, int precision, FILE *out);
/* a field that is a finite number (blanks around it allowed) */
int to_number(const char *field, double *out);
#endif
X
cat > src/stats.c <<'X'
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "stats.h"

void column_init(struct column *c) { c->v = NULL; c->n = c->cap = 0; }

void column_add(struct column *c, double x) {
    if (c->n == c->cap) c->v = realloc(c->v, (c->cap = c->cap ? 2 * c->cap : 16) * sizeof *c->v);
    c->v[c->n++] = x;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void column_print(struct column *c, const char *name, int precision, FILE *out) {
    if (c->n == 0) { fprintf(out, "%s: no numbers\n", name); return; }
    double sum = 0, lo = c->v[0], hi = c->v[0];
    for (size_t i = 0; i < c->n; i++) {
        sum += c->v[i];
        if (c->v[i] < lo) lo = c->v[i];
        if (c->v[i] > hi) hi = c->v[i];
    }
    qsort(c->v, c->n, sizeof *c->v, cmp);
    double median = c->n % 2 ? c->v[c->n / 2] : (c->v[c->n / 2 - 1] + c->v[c->n / 2]) / 2;
    fprintf(out, "%s: n=%zu min=%g max=%g mean=%.*f median=%.*f\n", name, c->n, lo, hi, precision, sum / c->n,
            precision, median);
}

int to_number(const char *field, double *out) {
    char *end;
    while (*field == ' ') field++;
    if (!*field) return 0;
    double x = strtod(field, &end);
    while (*end == ' ') end++;
    if (*end || !isfinite(x)) return 0;
    *out = x;
    return 1;
}
X
main_c() {  # $1: splitting (inline | parse), $2: options (base | column | precision), $3 usage, $4 version, $5 split function, $6 unknown --column (loose | strict)
  {
    printf '#define _POSIX_C_SOURCE 200809L\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n'
    [ "$1" = parse ] && printf '#include "parse.h"\n'
    printf '#include "stats.h"\n\n'
    if [ "$1" = inline ]; then
      cat <<'X'
#define MAX_FIELDS 64

static int split(char *line, char **fields, int max) {
    int n = 0;
    char *p = line;
    line[strcspn(line, "\r\n")] = '\0';
    for (;;) {
        if (n == max) break;
        fields[n++] = p;
        char *comma = strchr(p, ',');
        if (!comma) break;
        *comma = '\0';
        p = comma + 1;
    }
    return n;
}

X
    fi
    cat <<X
static void usage(void) { fprintf(stderr, "$3\n"); }

int main(int argc, char **argv) {
    const char *only = NULL, *path = NULL;
    int precision = 2;
    for (int i = 1; i < argc; i++) {
X
    case $2 in
      base) printf '        if' ;;
      column) printf '        if (!strcmp(argv[i], "--column") && i + 1 < argc) only = argv[++i];\n        else if' ;;
      precision) cat <<'X'
        if (!strcmp(argv[i], "--column") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--precision") && i + 1 < argc) {
            precision = atoi(argv[++i]);
            if (precision < 0 || precision > 10) { usage(); return 2; }
        }
X
        printf '        else if' ;;
    esac
    cat <<X
 (!strcmp(argv[i], "--version")) { puts("colstat $4"); return 0; }
        else if (argv[i][0] == '-' && argv[i][1]) { usage(); return 2; }
        else path = argv[i];
    }
    FILE *f = path ? fopen(path, "r") : stdin;
    if (!f) { perror(path); return 1; }
    char *header = NULL, *line = NULL, *names[MAX_FIELDS], *fields[MAX_FIELDS];
    size_t hcap = 0, cap = 0;
    if (getline(&header, &hcap, f) < 0) { fprintf(stderr, "colstat: empty input\n"); return 1; }
    int ncols = $5(header, names, MAX_FIELDS), found = 0;
    struct column cols[MAX_FIELDS];
    for (int i = 0; i < ncols; i++) column_init(&cols[i]);
    while (getline(&line, &cap, f) >= 0) {
        int n = $5(line, fields, MAX_FIELDS);
        double x;
        for (int i = 0; i < ncols && i < n; i++)
            if (to_number(fields[i], &x)) column_add(&cols[i], x);
    }
    for (int i = 0; i < ncols; i++) {
        if (only && strcmp(names[i], only) != 0) continue;
        found = 1;
        column_print(&cols[i], names[i], precision, stdout);
    }
X
    if [ "$6" = strict ]; then
      printf '    if (only && !found) { fprintf(stderr, "colstat: no column %%s\\n", only); return 1; }\n'
    else
      printf '    (void)found;\n'
    fi
    printf '    return 0;\n}\n'
  } > src/main.c
}
U1='usage: colstat [--column NAME] [FILE]'
U2='usage: colstat [--column NAME] [--precision N] [FILE]'
main_c inline base "usage: colstat [FILE]" 1.0 split loose
commit "colstat: per-column count, min, max, mean and median"
printf '# colstat\n\nPer-column statistics of a CSV file with a header line: `colstat data.csv`.\n' > README.md
commit "Add README"
main_c inline column "$U1" 1.1 split loose
commit "Add --column option"
printf '\n`--column NAME` reports one column only.\n' >> README.md
commit "Document --column in README"
printf '# Changes\n\n## 1.1\n- --column\n' > CHANGELOG.md
commit "Add CHANGELOG"
sed -i 's/^#include <math.h>$/#include <math.h>\n#include <stdio.h>/' src/stats.c
commit "stats: include stdio.h for FILE"
# 7-9: parse.c exists but the Makefile does not build it
cat > src/parse.h <<'X'
#ifndef PARSE_H
#define PARSE_H
#define MAX_FIELDS 64
int parse_line(char *line, char **fields, int max);
#endif
X
cat > src/parse.c <<'X'
#include <string.h>
#include "parse.h"

int parse_line(char *line, char **fields, int max) {
    int n = 0;
    char *p = line;
    line[strcspn(line, "\r\n")] = '\0';
    for (;;) {
        if (n == max) break;
        fields[n++] = p;
        char *comma = strchr(p, ',');
        if (!comma) break;
        *comma = '\0';
        p = comma + 1;
    }
    return n;
}
X
main_c parse column "$U1" 1.1 parse_line loose
commit "Move CSV splitting into parse.c"
sed -i 's/^int parse_line(/\/* Splits a CSV line in place at its commas into at most max fields; returns how many. *\/\nint parse_line(/' src/parse.h
commit "parse: document parse_line"
sed -i 's/^    return 0;$/    free(header);\n    free(line);\n    return 0;/' src/main.c
commit "main: free the line buffers"
sed -i 's/^OBJS = src\/main.o src\/stats.o$/OBJS = src\/main.o src\/stats.o src\/parse.o/' Makefile
commit "Makefile: build parse.c"
# 11: quoted fields, and empty fields are skipped by mistake
cat > src/parse.c <<'X'
#include <string.h>
#include "parse.h"

/* A field may be quoted: "a, b" is one field, and "" inside quotes is one quote character. */
int parse_line(char *line, char **fields, int max) {
    int n = 0;
    char *p = line;
    line[strcspn(line, "\r\n")] = '\0';
    while (n < max) {
        while (*p == ',') p++;
        if (!*p) break;
        if (*p == '"') {
            char *out = p, *q = p + 1;
            fields[n++] = out;
            while (*q) {
                if (q[0] == '"' && q[1] == '"') { *out++ = '"'; q += 2; }
                else if (*q == '"') { q++; break; }
                else *out++ = *q++;
            }
            char *comma = strchr(q, ',');
            *out = '\0';
            if (!comma) break;
            p = comma + 1;
        } else {
            fields[n++] = p;
            char *comma = strchr(p, ',');
            if (!comma) break;
            *comma = '\0';
            p = comma + 1;
        }
    }
    return n;
}
X
sed -i 's|^/\* Splits a CSV line.*|/* Splits a CSV line in place into at most max fields ("..." quotes a field); returns how many. */|' src/parse.h
commit "Support quoted fields"
printf '\n## 1.3\n- quoted fields\n' >> CHANGELOG.md
commit "CHANGELOG: 1.3"
main_c parse precision "$U2" 1.3 parse_line loose
sed -i 's/^    return 0;$/    free(header);\n    free(line);\n    return 0;/' src/main.c
commit "Add --precision option"
printf '\n`--precision N` sets the decimals of mean and median (default 2).\n' >> README.md
commit "README: describe --precision"
main_c parse precision "$U2" 1.3 parse_line strict
sed -i 's/^    return 0;$/    free(header);\n    free(line);\n    return 0;/' src/main.c
commit "Exit 1 when --column names no column"
printf '\n## 1.4\n- --precision\n- exit status 1 for an unknown --column\n' >> CHANGELOG.md
commit "CHANGELOG: 1.4"
sed -i 's/puts("colstat 1.3")/puts("colstat 1.4")/' src/main.c
commit "Bump version to 1.4"
printf '\nExample: `colstat --column price --precision 3 sales.csv`\n' >> README.md
commit "README: example"
if [ "${1:-original}" != "missing_prerequisite" ]; then
  mkdir -p qa
  cat > qa/regress.sh <<'X'
#!/bin/sh
# Regression check: builds colstat and compares its report on qa/sample.csv with the known-good one.
# Exit status 0 = good, 1 = bad.
cd "$(dirname "$0")/.." || exit 1
make -s clean >/dev/null 2>&1
if ! make -s >/dev/null 2>&1; then echo "BUILD FAILED"; exit 1; fi
if ./colstat qa/sample.csv | cmp -s - qa/expected.txt; then echo "OK"; exit 0; fi
echo "WRONG OUTPUT"; exit 1
X
  chmod +x qa/regress.sh
  printf 'region,units,price,discount\nnorth,12,3.50,\nsouth,,4.25,0.10\neast,7,,0.05\nwest,3,2.75,\nnorth,9,3.10,0.20\n' > qa/sample.csv
  printf 'region: no numbers\nunits: n=4 min=3 max=12 mean=7.75 median=8.00\nprice: n=4 min=2.75 max=4.25 mean=3.40 median=3.30\ndiscount: n=3 min=0.05 max=0.2 mean=0.12 median=0.10\n' > qa/expected.txt
fi
