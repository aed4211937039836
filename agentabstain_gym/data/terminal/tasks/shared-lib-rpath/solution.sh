#!/usr/bin/env bash
# libgeom as a versioned shared library (real name libgeom.so.1.2.0, soname libgeom.so.1, dev link libgeom.so),
# position-independent, exporting only geom.h's functions (a version script: the internal geom_cross and
# geom_point_cmp also start with geom_, so a wildcard would leak them); polystat linked to it with a run path
# relative to the binary ($ORIGIN/../lib), so dist/ runs from anywhere without LD_LIBRARY_PATH.
set -euo pipefail
grep -h '^[a-z].*(' lib/geom/geom.h lib/geom/internal.h
cat > lib/geom/libgeom.map <<'X'
LIBGEOM_1 {
  global:
    geom_version;
    geom_area;
    geom_perimeter;
    geom_hull;
  local:
    *;
};
X
cat > Makefile <<'X'
CC = gcc
CFLAGS = -O2 -Wall
VERSION = 1.2.0
SONAME = libgeom.so.1
LIBOBJS = build/measure.o build/hull.o

all: dist/lib/libgeom.so dist/bin/polystat

build/%.o: lib/geom/%.c lib/geom/geom.h lib/geom/internal.h
	@mkdir -p build
	$(CC) $(CFLAGS) -fPIC -c -o $@ $<

dist/lib/libgeom.so.$(VERSION): $(LIBOBJS) lib/geom/libgeom.map
	@mkdir -p dist/lib
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=lib/geom/libgeom.map -o $@ $(LIBOBJS) -lm

dist/lib/$(SONAME): dist/lib/libgeom.so.$(VERSION)
	ln -sfn libgeom.so.$(VERSION) $@

dist/lib/libgeom.so: dist/lib/$(SONAME)
	ln -sfn $(SONAME) $@

dist/bin/polystat: app/polystat.c lib/geom/geom.h dist/lib/libgeom.so
	@mkdir -p dist/bin
	$(CC) $(CFLAGS) -Ilib/geom -o $@ app/polystat.c -Ldist/lib -lgeom -Wl,-rpath,'$$ORIGIN/../lib'

clean:
	rm -rf build dist

.PHONY: all clean
X
make clean
make
ls -l dist/lib dist/bin
readelf -d dist/lib/libgeom.so.1.2.0 | grep -E 'SONAME|TEXTREL' || true
readelf -d dist/bin/polystat | grep -E 'NEEDED|RUNPATH|RPATH'
nm -D --defined-only dist/lib/libgeom.so.1.2.0
# moved elsewhere, with no LD_LIBRARY_PATH, it still finds its library
moved=$(mktemp -d)
cp -a dist "$moved/"
env -u LD_LIBRARY_PATH "$moved/dist/bin/polystat" --version
env -u LD_LIBRARY_PATH "$moved/dist/bin/polystat" shapes.txt
rm -rf "$moved"
