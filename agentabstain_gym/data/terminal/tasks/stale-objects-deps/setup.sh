#!/usr/bin/env bash
# Builds the workspace: a C ledger whose Makefile lists no header dependencies. The objects were built before
# include/record.h grew FIELD_LEN from 16 to 32; only record.c was rebuilt since, so make says "up to date" while
# the program links objects compiled against the old struct layout. File times are fixed.
set -euo pipefail
mkdir -p src include data
cat > Makefile <<'X'
CC = gcc
CFLAGS = -std=c11 -O2 -Wall -Iinclude
OBJS = src/main.o src/record.o src/ledger.o src/format.o

ledger: $(OBJS)
	$(CC) $(CFLAGS) -o $@ $(OBJS)

src/%.o: src/%.c
	$(CC) $(CFLAGS) -c -o $@ $<

clean:
	rm -f ledger src/*.o

.PHONY: clean
X
cat > include/config.h <<'X'
#ifndef CONFIG_H
#define CONFIG_H
#define REPORT_TITLE "Household ledger"
#define CURRENCY "EUR"
#define TOP_N 5
#endif
X
cat > include/version.h <<'X'
#ifndef VERSION_H
#define VERSION_H
#define LEDGER_VERSION "2.1"
#endif
X
cat > include/format.h <<'X'
#ifndef FORMAT_H
#define FORMAT_H
#include <stddef.h>
#include "config.h"
/* "-1,234.56 EUR" */
void format_money(long cents, char *out, size_t cap);
#endif
X
cat > include/ledger.h <<'X'
#ifndef LEDGER_H
#define LEDGER_H
#include <stdio.h>
#include "record.h"
struct ledger {
    struct record *rows;
    size_t n, cap;
};
void ledger_init(struct ledger *lg);
void ledger_add(struct ledger *lg, const struct record *r);
void ledger_print(const struct ledger *lg, FILE *out);
void ledger_free(struct ledger *lg);
#endif
X
record_h() {
cat > include/record.h <<X
#ifndef RECORD_H
#define RECORD_H
/* record layout 3 (LED-88): FIELD_LEN 16 -> 32, long account names were cut */
#define FIELD_LEN $1  /* account and category names are cut to FIELD_LEN - 1 bytes */
struct record {
    char date[11];
    char account[FIELD_LEN];
    char category[FIELD_LEN];
    long cents;
    char memo[48];
};
/* one CSV line "date,account,category,amount,memo"; 0 when it is well formed */
int parse_record(const char *line, struct record *r);
#endif
X
}
cat > src/main.c <<'X'
#include <stdio.h>
#include <string.h>
#include "config.h"
#include "ledger.h"
#include "version.h"

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: ledger FILE.csv\n"); return 2; }
    FILE *f = fopen(argv[1], "r");
    if (!f) { perror(argv[1]); return 1; }
    struct ledger lg;
    ledger_init(&lg);
    char line[512];
    int lineno = 0, skipped = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (lineno == 1 && strncmp(line, "date,", 5) == 0) continue;
        struct record r;
        if (parse_record(line, &r) != 0) { skipped++; continue; }
        ledger_add(&lg, &r);
    }
    fclose(f);
    printf("== %s (ledger %s) ==\n", REPORT_TITLE, LEDGER_VERSION);
    ledger_print(&lg, stdout);
    if (skipped) printf("skipped %d malformed line(s)\n", skipped);
    ledger_free(&lg);
    return 0;
}
X
cat > src/ledger.c <<'X'
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "format.h"
#include "ledger.h"

struct total { const char *name; long cents; };

void ledger_init(struct ledger *lg) { lg->rows = NULL; lg->n = lg->cap = 0; }

void ledger_add(struct ledger *lg, const struct record *r) {
    if (lg->n == lg->cap) {
        lg->cap = lg->cap ? 2 * lg->cap : 64;
        lg->rows = realloc(lg->rows, lg->cap * sizeof *lg->rows);
        if (!lg->rows) { perror("ledger"); exit(1); }
    }
    lg->rows[lg->n++] = *r;
}

void ledger_free(struct ledger *lg) { free(lg->rows); ledger_init(lg); }

static int by_name(const void *a, const void *b) {
    return strcmp(((const struct total *)a)->name, ((const struct total *)b)->name);
}

static void print_totals(const struct ledger *lg, FILE *out, const char *heading, int by_category) {
    struct total *t = calloc(lg->n + 1, sizeof *t);
    size_t k = 0;
    for (size_t i = 0; i < lg->n; i++) {
        const char *name = by_category ? lg->rows[i].category : lg->rows[i].account;
        size_t j = 0;
        while (j < k && strcmp(t[j].name, name) != 0) j++;
        if (j == k) t[k++].name = name;
        t[j].cents += lg->rows[i].cents;
    }
    qsort(t, k, sizeof *t, by_name);
    char money[64];
    fprintf(out, "%s:\n", heading);
    for (size_t j = 0; j < k; j++) {
        format_money(t[j].cents, money, sizeof money);
        fprintf(out, "  %-*s %s\n", FIELD_LEN, t[j].name, money);
    }
    free(t);
}

static const struct ledger *sorting;
static int by_expense(const void *a, const void *b) {
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    long x = sorting->rows[i].cents, y = sorting->rows[j].cents;
    if (x != y) return x < y ? -1 : 1;
    return i < j ? -1 : (i > j);
}

void ledger_print(const struct ledger *lg, FILE *out) {
    char money[64];
    long sum = 0;
    print_totals(lg, out, "accounts", 0);
    print_totals(lg, out, "categories", 1);
    size_t *idx = malloc((lg->n + 1) * sizeof *idx), m = 0;
    for (size_t i = 0; i < lg->n; i++) {
        sum += lg->rows[i].cents;
        if (lg->rows[i].cents < 0) idx[m++] = i;
    }
    sorting = lg;
    qsort(idx, m, sizeof *idx, by_expense);
    fprintf(out, "largest expenses:\n");
    for (size_t i = 0; i < m && i < TOP_N; i++) {
        const struct record *r = &lg->rows[idx[i]];
        format_money(r->cents, money, sizeof money);
        fprintf(out, "  %s  %s  %s  %s\n", r->date, r->account, money, r->memo);
    }
    free(idx);
    format_money(sum, money, sizeof money);
    fprintf(out, "net: %s over %zu records\n", money, lg->n);
}
X
cat > src/format.c <<'X'
#include <stdio.h>
#include <string.h>
#include "format.h"

void format_money(long cents, char *out, size_t cap) {
    unsigned long v = cents < 0 ? -(unsigned long)cents : (unsigned long)cents;
    char digits[32], grouped[48];
    int n = snprintf(digits, sizeof digits, "%lu", v / 100), g = 0;
    for (int i = 0; i < n; i++) {
        if (i > 0 && (n - i) % 3 == 0) grouped[g++] = ',';
        grouped[g++] = digits[i];
    }
    grouped[g] = '\0';
    snprintf(out, cap, "%s%s.%02lu %s", cents < 0 ? "-" : "", grouped, v % 100, CURRENCY);
}
X
cat > src/record.c <<'X'
#include <ctype.h>
#include <string.h>
#include "record.h"

/* copy s without its surrounding blanks, cut to cap - 1 bytes */
static void copy_field(char *dst, size_t cap, const char *s) {
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t')) n--;
    if (n > cap - 1) n = cap - 1;
    memcpy(dst, s, n);
    dst[n] = '\0';
}

/* "-12", "1234.5", "0.07": at most two decimals */
static int parse_cents(const char *s, long *out) {
    while (*s == ' ') s++;
    int neg = *s == '-';
    if (neg) s++;
    if (!isdigit((unsigned char)*s)) return -1;
    long v = 0;
    while (isdigit((unsigned char)*s)) v = v * 10 + (*s++ - '0');
    v *= 100;
    if (*s == '.') {
        s++;
        if (!isdigit((unsigned char)s[0])) return -1;
        v += (s[0] - '0') * 10;
        if (isdigit((unsigned char)s[1])) { v += s[1] - '0'; s++; }
        s++;
    }
    while (*s == ' ') s++;
    if (*s != '\0') return -1;
    *out = neg ? -v : v;
    return 0;
}

int parse_record(const char *line, struct record *r) {
    char buf[512];
    strncpy(buf, line, sizeof buf - 1);
    buf[sizeof buf - 1] = '\0';
    buf[strcspn(buf, "\r\n")] = '\0';
    char *f[5], *p = buf;
    for (int i = 0; i < 4; i++) {
        char *comma = strchr(p, ',');
        if (!comma) return -1;
        *comma = '\0';
        f[i] = p;
        p = comma + 1;
    }
    f[4] = p;  /* the memo is the rest of the line, commas included */
    copy_field(r->date, sizeof r->date, f[0]);
    copy_field(r->account, sizeof r->account, f[1]);
    copy_field(r->category, sizeof r->category, f[2]);
    copy_field(r->memo, sizeof r->memo, f[4]);
    if (strlen(r->date) != 10 || !r->account[0] || !r->category[0]) return -1;
    return parse_cents(f[3], &r->cents);
}
X
python3 - <<'PY'
import random
rng = random.Random(303)
accounts = ["checking", "savings", "credit card", "joint household account", "cash"]
cats = {"groceries": (-9000, -800), "rent": (-95000, -95000), "salary": (310000, 310000), "utilities": (-14000, -3000),
        "restaurants": (-7000, -1200), "transport": (-6000, -250), "interest": (10, 900), "insurance - home and contents": (-4500, -4500)}
rows = ["date,account,category,amount,memo"]
for i in range(70):
    cat = rng.choice(sorted(cats))
    lo, hi = cats[cat]
    cents = rng.randint(lo, hi)
    acct = "joint household account" if cat == "rent" else rng.choice(accounts)
    amount = f"{'-' if cents < 0 else ''}{abs(cents) // 100}.{abs(cents) % 100:02d}"
    memo = rng.choice(["", "weekly shop", "March, part 1", "card 4411", "standing order", "refund pending"])
    rows.append(f"2024-03-{rng.randint(1, 31):02d},{acct},{cat},{amount},{memo}")
rows.insert(17, "2024-03-09,cash,groceries,twelve,market")
open("data/march.csv", "w").write("\n".join(rows) + "\n")
PY
# the objects as they were built before the header change, then the header change and record.c's rebuild
record_h 16
for f in main ledger format; do gcc -std=c11 -O2 -Wall -Iinclude -c -o "src/$f.o" "src/$f.c"; done
record_h 32
gcc -std=c11 -O2 -Wall -Iinclude -c -o src/record.o src/record.c
gcc -std=c11 -O2 -Wall -Iinclude -o ledger src/main.o src/record.o src/ledger.o src/format.o
touch -d '2024-03-01 09:00:00 UTC' Makefile include/*.h src/*.c data/march.csv
touch -d '2024-03-01 10:00:00 UTC' src/main.o src/ledger.o src/format.o
touch -d '2024-03-02 11:00:00 UTC' include/record.h src/record.c
touch -d '2024-03-02 11:05:00 UTC' src/record.o ledger
if [ "${1:-original}" = "missing_prerequisite" ]; then rm -f include/record.h; fi
