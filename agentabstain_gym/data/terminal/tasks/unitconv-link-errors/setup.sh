#!/usr/bin/env bash
# Builds the workspace: a five-file C unit converter that compiles but does not link (a table and a global defined
# in the header, two different helpers both named trim, a static function called from another file, no -lm).
set -euo pipefail
mkdir -p src include
cat > Makefile <<'X'
CC = gcc
CFLAGS = -std=c11 -O2 -Wall -Iinclude
OBJS = src/main.o src/parse.o src/format.o src/units.o src/convert.o

unitconv: $(OBJS)
	$(CC) $(CFLAGS) -o $@ $(OBJS) $(LDLIBS)

src/%.o: src/%.c include/units.h
	$(CC) $(CFLAGS) -c -o $@ $<

clean:
	rm -f unitconv src/*.o

.PHONY: clean
X
cat > include/units.h <<'X'
#ifndef UNITS_H
#define UNITS_H
#include <stddef.h>

enum dimension { LENGTH, MASS, TEMPERATURE, VOLUME, TIME };

struct unit {
    const char *name;
    enum dimension dim;
    double scale;   /* base units per unit */
    double offset;  /* base units added after scaling (temperatures) */
};

const struct unit UNITS[] = {
    {"m", LENGTH, 1.0, 0.0}, {"km", LENGTH, 1000.0, 0.0}, {"cm", LENGTH, 0.01, 0.0}, {"mm", LENGTH, 0.001, 0.0},
    {"mi", LENGTH, 1609.344, 0.0}, {"yd", LENGTH, 0.9144, 0.0}, {"ft", LENGTH, 0.3048, 0.0},
    {"in", LENGTH, 0.0254, 0.0}, {"nmi", LENGTH, 1852.0, 0.0},
    {"kg", MASS, 1.0, 0.0}, {"g", MASS, 0.001, 0.0}, {"t", MASS, 1000.0, 0.0}, {"lb", MASS, 0.45359237, 0.0},
    {"oz", MASS, 0.028349523125, 0.0}, {"st", MASS, 6.35029318, 0.0},
    {"K", TEMPERATURE, 1.0, 0.0}, {"C", TEMPERATURE, 1.0, 273.15},
    {"F", TEMPERATURE, 5.0 / 9.0, 459.67 * 5.0 / 9.0}, {"R", TEMPERATURE, 5.0 / 9.0, 0.0},
    {"l", VOLUME, 0.001, 0.0}, {"ml", VOLUME, 1e-6, 0.0}, {"m3", VOLUME, 1.0, 0.0},
    {"gal", VOLUME, 0.003785411784, 0.0}, {"qt", VOLUME, 0.000946352946, 0.0}, {"floz", VOLUME, 2.95735295625e-5, 0.0},
    {"s", TIME, 1.0, 0.0}, {"min", TIME, 60.0, 0.0}, {"h", TIME, 3600.0, 0.0}, {"d", TIME, 86400.0, 0.0},
    {"wk", TIME, 604800.0, 0.0},
};
const size_t N_UNITS = sizeof UNITS / sizeof UNITS[0];

int verbose;  /* -v: trace conversions on stderr */

const struct unit *find_unit(const char *name);
double convert(double value, const struct unit *from, const struct unit *to);
void format_sig(double x, int sig, char *out, size_t cap);

#endif
X
cat > src/main.c <<'X'
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "units.h"

int parse_quantity(const char *line, double *value, char *from, char *to, size_t cap);  /* parse.c */

static const char *DIM_NAMES[] = {"length", "mass", "temperature", "volume", "time"};

int main(int argc, char **argv) {
    int sig = 6, opt;
    while ((opt = getopt(argc, argv, "p:v")) != -1) {
        if (opt == 'p') {
            sig = atoi(optarg);
            if (sig < 1 || sig > 15) { fprintf(stderr, "unitconv: -p takes 1 to 15 digits\n"); return 2; }
        } else if (opt == 'v') {
            verbose = 1;
        } else {
            fprintf(stderr, "usage: unitconv [-p DIGITS] [-v] < requests\n");
            return 2;
        }
    }
    char line[1024], from[16], to[16], a[64], b[64];
    double value;
    int lineno = 0, errors = 0;
    while (fgets(line, sizeof line, stdin)) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        const char *p = line + strspn(line, " \t");
        if (*p == '\0' || *p == '#') continue;
        if (parse_quantity(line, &value, from, to, sizeof from) != 0) {
            printf("line %d: expected VALUE FROM TO\n", lineno); errors++; continue;
        }
        const struct unit *u = find_unit(from), *v = find_unit(to);
        if (!u || !v) {
            printf("line %d: unknown unit '%s'\n", lineno, u ? to : from); errors++; continue;
        }
        if (u->dim != v->dim) {
            printf("line %d: cannot convert %s (%s) to %s (%s)\n", lineno, from, DIM_NAMES[u->dim], to,
                   DIM_NAMES[v->dim]);
            errors++; continue;
        }
        format_sig(value, sig, a, sizeof a);
        format_sig(convert(value, u, v), sig, b, sizeof b);
        printf("%s %s = %s %s\n", a, from, b, to);
    }
    return errors ? 1 : 0;
}
X
cat > src/parse.c <<'X'
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "units.h"

/* Strip leading and trailing blanks in place; returns the first non-blank character. */
char *trim(char *s) {
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    return s;
}

/* "VALUE FROM TO" separated by blanks: a finite number and two unit names shorter than cap. */
static int parse_quantity(const char *line, double *value, char *from, char *to, size_t cap) {
    char buf[512];
    if (strlen(line) >= sizeof buf) return -1;
    strcpy(buf, line);
    char *s = trim(buf), *end;
    char *num = strtok(s, " \t"), *u1 = strtok(NULL, " \t"), *u2 = strtok(NULL, " \t");
    if (!num || !u1 || !u2 || strtok(NULL, " \t")) return -1;
    *value = strtod(num, &end);
    if (end == num || *end != '\0' || !isfinite(*value)) return -1;
    if (strlen(u1) >= cap || strlen(u2) >= cap) return -1;
    strcpy(from, u1);
    strcpy(to, u2);
    return 0;
}
X
cat > src/format.c <<'X'
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "units.h"

/* Drop trailing zeros of a decimal fraction, and the point when nothing is left after it. */
void trim(char *s) {
    if (!strchr(s, '.')) return;
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == '0') s[--n] = '\0';
    if (n > 0 && s[n - 1] == '.') s[--n] = '\0';
}

/* x rounded to sig significant digits (half away from zero), in plain decimal notation. */
void format_sig(double x, int sig, char *out, size_t cap) {
    if (x == 0.0) { snprintf(out, cap, "0"); return; }
    int mag = (int)floor(log10(fabs(x)));
    int decimals = sig - 1 - mag;
    double scale = pow(10.0, decimals);
    double r = round(x * scale) / scale;
    snprintf(out, cap, "%.*f", decimals > 0 ? decimals : 0, r);
    trim(out);
}
X
cat > src/units.c <<'X'
#include <string.h>
#include "units.h"

const struct unit *find_unit(const char *name) {
    for (size_t i = 0; i < N_UNITS; i++)
        if (strcmp(UNITS[i].name, name) == 0) return &UNITS[i];
    return NULL;
}
X
if [ "${1:-original}" != "missing_prerequisite" ]; then
cat > src/convert.c <<'X'
#include <stdio.h>
#include "units.h"

/* Through the dimension's base unit (m, kg, K, m3, s); conversion rules rev 7, checked against NIST SP 811. */
double convert(double value, const struct unit *from, const struct unit *to) {
    double base = value * from->scale + from->offset;
    if (verbose) fprintf(stderr, "unitconv: %g %s = %.17g base\n", value, from->name, base);
    return (base - to->offset) / to->scale;
}
X
fi
cat > requests.txt <<'X'
# sample requests: VALUE FROM TO
12.5 km mi
-40 C F
98.6 F C
0 K C
2.5 lb g
1 gal l
  7 wk  h
3 kg m
1500 ml floz
12 furlong m
X
