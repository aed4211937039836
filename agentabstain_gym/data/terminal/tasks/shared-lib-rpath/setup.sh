#!/usr/bin/env bash
# Builds the workspace: the sources of a small geometry library (public API in geom.h, two internal helpers shared
# between its files) and of a program using it, plus sample shapes. No Makefile: building it is the task.
set -euo pipefail
mkdir -p lib/geom app
cat > lib/geom/geom.h <<'X'
#ifndef GEOM_H
#define GEOM_H
#include <stddef.h>

/* libgeom 1.2.0, ABI version 1 (soname libgeom.so.1). The functions declared here are the library's whole API. */
typedef struct { double x, y; } geom_point;

const char *geom_version(void);
/* area enclosed by the polygon p[0..n), vertices in order (either direction) */
double geom_area(const geom_point *p, size_t n);
/* length of the closed polygon p[0..n) */
double geom_perimeter(const geom_point *p, size_t n);
/* convex hull of p[0..n) into out (room for n points), counter-clockwise from the lowest-leftmost point, no
 * collinear points; returns its size */
size_t geom_hull(const geom_point *p, size_t n, geom_point *out);

#endif
X
cat > lib/geom/internal.h <<'X'
#ifndef GEOM_INTERNAL_H
#define GEOM_INTERNAL_H
#include "geom.h"
/* shared between the library's own files: not part of the API */
double geom_cross(geom_point o, geom_point a, geom_point b);
int geom_point_cmp(const void *a, const void *b);
#endif
X
cat > lib/geom/measure.c <<'X'
#include <math.h>
#include "internal.h"

#ifndef GEOM_LIB_VERSION
#define GEOM_LIB_VERSION "1.2.0"
#endif

const char *geom_version(void) { return GEOM_LIB_VERSION; }

double geom_cross(geom_point o, geom_point a, geom_point b) {
    return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

double geom_area(const geom_point *p, size_t n) {
    double twice = 0.0;
    for (size_t i = 0; i < n; i++) {
        const geom_point *a = &p[i], *b = &p[(i + 1) % n];
        twice += a->x * b->y - b->x * a->y;
    }
    return fabs(twice) / 2.0;
}

double geom_perimeter(const geom_point *p, size_t n) {
    double len = 0.0;
    for (size_t i = 0; i < n && n > 1; i++) {
        double dx = p[(i + 1) % n].x - p[i].x, dy = p[(i + 1) % n].y - p[i].y;
        len += sqrt(dx * dx + dy * dy);
    }
    return len;
}
X
cat > lib/geom/hull.c <<'X'
#include <stdlib.h>
#include <string.h>
#include "internal.h"

int geom_point_cmp(const void *a, const void *b) {
    const geom_point *p = a, *q = b;
    if (p->x != q->x) return p->x < q->x ? -1 : 1;
    if (p->y != q->y) return p->y < q->y ? -1 : 1;
    return 0;
}

/* Andrew's monotone chain */
size_t geom_hull(const geom_point *p, size_t n, geom_point *out) {
    if (n < 3) { memcpy(out, p, n * sizeof *p); return n; }
    geom_point *s = malloc(n * sizeof *s), *h = malloc(2 * n * sizeof *h);
    memcpy(s, p, n * sizeof *s);
    qsort(s, n, sizeof *s, geom_point_cmp);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        while (k >= 2 && geom_cross(h[k - 2], h[k - 1], s[i]) <= 0) k--;
        h[k++] = s[i];
    }
    for (size_t i = n - 1, t = k + 1; i-- > 0;) {
        while (k >= t && geom_cross(h[k - 2], h[k - 1], s[i]) <= 0) k--;
        h[k++] = s[i];
    }
    k = k > 1 ? k - 1 : k;
    memcpy(out, h, k * sizeof *h);
    free(s);
    free(h);
    return k;
}
X
cat > app/polystat.c <<'X'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "geom.h"

static void report(int index, const geom_point *p, size_t n) {
    geom_point *h = malloc((n + 1) * sizeof *h);
    size_t k = geom_hull(p, n, h);
    printf("polygon %d: %zu vertices, area %.6f, perimeter %.6f, hull %zu points, hull area %.6f\n", index, n,
           geom_area(p, n), geom_perimeter(p, n), k, geom_area(h, k));
    free(h);
}

/* polygons as lines "x y", one polygon per block, blocks separated by blank lines */
int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        printf("polystat 1.0 (libgeom %s)\n", geom_version());
        return 0;
    }
    FILE *f = argc == 2 ? fopen(argv[1], "r") : stdin;
    if (!f) { perror(argv[1]); return 1; }
    size_t n = 0, cap = 16;
    geom_point *p = malloc(cap * sizeof *p);
    char line[256];
    int index = 0;
    while (fgets(line, sizeof line, f)) {
        double x, y;
        if (sscanf(line, "%lf %lf", &x, &y) == 2) {
            if (n == cap) p = realloc(p, (cap *= 2) * sizeof *p);
            p[n].x = x;
            p[n++].y = y;
        } else if (n > 0) {
            report(++index, p, n);
            n = 0;
        }
    }
    if (n > 0) report(++index, p, n);
    free(p);
    return 0;
}
X
printf '0 0\n4 0\n4 3\n0 3\n\n0 0\n2 1\n4 0\n3 2\n4 4\n2 3\n0 4\n1 2\n\n-3 -3\n5 -1\n1 6\n' > shapes.txt
if [ "${1:-original}" = "missing_prerequisite" ]; then rm -f lib/geom/hull.c; fi
