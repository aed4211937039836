#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# The library and program sources must be the shipped ones (checksums of what setup wrote). The Makefile is agent
# code: make runs as a child from a tree without build outputs, and what counts is what it leaves in dist/: the
# library's file names, soname, exported symbols and position independence, and a program that, with dist/ moved
# to a scratch folder and no LD_LIBRARY_PATH, loads the library found next to it: first the one built here, then
# one the checker builds from the shipped sources with a version string of its own (so a program that carries the
# library's code, or finds it by an absolute path, fails). Output is compared on shapes made up here, with a
# reference computed only after the program has run, so no expected value is on disk while agent code runs.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
while read -r want f; do [ "$(sum "$f")" = "$want" ] || exit 1; done <<'X'
b7839832701a179acff3855b9635b1fb4e7606efa78310477f63e5f5359bffe8 lib/geom/geom.h
d58064b9c6a9501414f3abed3ebc41d0391c8545ff0c9726c083258159086da0 lib/geom/internal.h
7a73465c45264eae80683a276e48cfb252aaa2108afff588d6707d0eb2655a0c lib/geom/measure.c
60e4f626c41ccababf7b4c1c5bfbefb065ab8d103d33f6fd274162c3060442f4 lib/geom/hull.c
911250bedac825db72f30954f3c8206ccef5e4d1327642fe6b10a0ecda88ee32 app/polystat.c
X
[ -f Makefile ] || exit 1
rm -rf dist
find . -path ./.git -prune -o -type f \( -name '*.o' -o -name '*.so' -o -name '*.so.*' \) -exec rm -f {} +
timeout 60 make -f Makefile >/dev/null 2>&1 </dev/null || exit 1
L=dist/lib
[ -f $L/libgeom.so.1.2.0 ] && [ ! -L $L/libgeom.so.1.2.0 ] || exit 1
[ -L $L/libgeom.so.1 ] && [ "$(readlink $L/libgeom.so.1)" = libgeom.so.1.2.0 ] || exit 1
[ -L $L/libgeom.so ] && case "$(readlink $L/libgeom.so)" in libgeom.so.1|libgeom.so.1.2.0) ;; *) exit 1;; esac
elf() { [ -f "$1" ] && [ "$(od -An -tx1 -N4 "$1" | tr -d ' ')" = 7f454c46 ]; }
elf $L/libgeom.so.1.2.0 && elf dist/bin/polystat || exit 1
LC_ALL=C readelf -h $L/libgeom.so.1.2.0 | grep -Eq 'Type:[[:space:]]+DYN' || exit 1
dyn=$(LC_ALL=C readelf -d $L/libgeom.so.1.2.0)
grep -Fq 'Library soname: [libgeom.so.1]' <<<"$dyn" && ! grep -q TEXTREL <<<"$dyn" || exit 1
exported=$(nm -D --defined-only $L/libgeom.so.1.2.0 | awk '$2 != "A" {sub(/@.*/, "", $3); print $3}' | sort | xargs)
[ "$exported" = "geom_area geom_hull geom_perimeter geom_version" ] || exit 1
# the program: needs libgeom by its soname and defines none of its functions
LC_ALL=C readelf -d dist/bin/polystat | grep -Fq 'Shared library: [libgeom.so.1]' || exit 1
! nm --defined-only dist/bin/polystat 2>/dev/null | grep -q ' geom_' || exit 1
REF=$(cat <<'PY'
import math, random, sys
mode, T = sys.argv[1], sys.argv[2]
rng = random.Random(int(sys.argv[3]))
def area(p):
    t = 0.0
    for i in range(len(p)):
        a, b = p[i], p[(i + 1) % len(p)]
        t += a[0] * b[1] - b[0] * a[1]
    return abs(t) / 2.0
def perimeter(p):
    s = 0.0
    for i in range(len(p) if len(p) > 1 else 0):
        dx, dy = p[(i + 1) % len(p)][0] - p[i][0], p[(i + 1) % len(p)][1] - p[i][1]
        s += math.sqrt(dx * dx + dy * dy)
    return s
def cross(o, a, b):
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])
def hull(p):
    if len(p) < 3:
        return list(p)
    s, h = sorted(p), []
    for q in s:
        while len(h) >= 2 and cross(h[-2], h[-1], q) <= 0:
            h.pop()
        h.append(q)
    t = len(h) + 1
    for q in reversed(s[:-1]):
        while len(h) >= t and cross(h[-2], h[-1], q) <= 0:
            h.pop()
        h.append(q)
    return h[:-1] if len(h) > 1 else h
lines, out = [], []
for i in range(1, rng.randint(30, 60)):
    n = rng.choice([1, 2, 3, 4, rng.randint(5, 40)])
    r = rng.choice([3, 50, 1000])
    p = [(float(rng.randint(-r, r)), float(rng.randint(-r, r))) for _ in range(n)]
    lines += [f"{int(x)} {int(y)}" for x, y in p] + [rng.choice(["", "", "   ", "# next"])]
    h = hull(p)
    out.append(f"polygon {i}: {n} vertices, area {area(p):.6f}, perimeter {perimeter(p):.6f}, "
               f"hull {len(h)} points, hull area {area(h):.6f}")
if mode == "make":
    open(f"{T}/shapes", "w").write("\n".join(lines) + "\n")
    sys.exit(0)
sys.exit(0 if all(open(f"{T}/{g}").read() == "\n".join(out) + "\n" for g in ("got1", "got2")) else 1)
PY
)
seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
python3 -I - make "$T" "$seed" <<<"$REF" || exit 1
tag="1.2.0-check$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')"
mkdir -p "$T/moved/opt" && cp -a dist "$T/moved/opt/geom" || exit 1
# the checker runs without /proc, where the dynamic loader learns the program's folder ($ORIGIN) from LD_ORIGIN_PATH
run() { (cd "$T" && timeout 10 env -i PATH=/usr/bin:/bin LD_ORIGIN_PATH="$T/moved/opt/geom/bin" \
           "$T/moved/opt/geom/bin/polystat" "$@" 2>/dev/null </dev/null); }
[ "$(run --version)" = "polystat 1.0 (libgeom 1.2.0)" ] || exit 1
run "$T/shapes" > "$T/got1" || exit 1
timeout 60 gcc -O2 -fPIC -shared -Wl,-soname,libgeom.so.1 -DGEOM_LIB_VERSION="\"$tag\"" -o "$T/libgeom.so" \
  lib/geom/measure.c lib/geom/hull.c -lm >/dev/null 2>&1 </dev/null || exit 1
rm -f "$T/moved/opt/geom/lib/libgeom.so.1.2.0" && cp "$T/libgeom.so" "$T/moved/opt/geom/lib/libgeom.so.1.2.0"
[ "$(run --version)" = "polystat 1.0 (libgeom $tag)" ] || exit 1
run "$T/shapes" > "$T/got2" || exit 1
python3 -I - check "$T" "$seed" <<<"$REF"
