#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# src/convert.c needs no change and must be the shipped one (checksum of what setup wrote). The Makefile and all
# other sources are agent code: make runs as a child from a clean tree, and only what the binary prints counts. Its
# output is compared with a reference of the shipped program computed here, on requests made up here (fresh every
# run: valid conversions in every dimension and precision, and every kind of bad line), stdout and -v's stderr.
# The reference runs only after the program has, so no expected value is on disk while agent code runs.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
[ "$(sum src/convert.c)" = bc0e7f4d172d2312c6d1249fe04f47dc9f9abce9268cca4e7c59c3fd37f13c2d ] || exit 1
[ -f Makefile ] || exit 1
rm -f unitconv src/*.o
timeout 60 make -f Makefile >/dev/null 2>&1 </dev/null || exit 1
[ -f unitconv ] && [ "$(od -An -tx1 -N4 unitconv | tr -d ' ')" = 7f454c46 ] || exit 1
cp unitconv "$T/unitconv"
REF=$(cat <<'PY'
import math, random, sys
mode, T = sys.argv[1], sys.argv[2]
rng = random.Random(int(sys.argv[3]))
L, M, K, V, S = range(5)
DIMS = ["length", "mass", "temperature", "volume", "time"]
UNITS = {"m": (L, 1.0, 0.0), "km": (L, 1000.0, 0.0), "cm": (L, 0.01, 0.0), "mm": (L, 0.001, 0.0),
         "mi": (L, 1609.344, 0.0), "yd": (L, 0.9144, 0.0), "ft": (L, 0.3048, 0.0), "in": (L, 0.0254, 0.0),
         "nmi": (L, 1852.0, 0.0), "kg": (M, 1.0, 0.0), "g": (M, 0.001, 0.0), "t": (M, 1000.0, 0.0),
         "lb": (M, 0.45359237, 0.0), "oz": (M, 0.028349523125, 0.0), "st": (M, 6.35029318, 0.0),
         "K": (K, 1.0, 0.0), "C": (K, 1.0, 273.15), "F": (K, 5.0 / 9.0, 459.67 * 5.0 / 9.0), "R": (K, 5.0 / 9.0, 0.0),
         "l": (V, 0.001, 0.0), "ml": (V, 1e-6, 0.0), "m3": (V, 1.0, 0.0), "gal": (V, 0.003785411784, 0.0),
         "qt": (V, 0.000946352946, 0.0), "floz": (V, 2.95735295625e-5, 0.0), "s": (S, 1.0, 0.0),
         "min": (S, 60.0, 0.0), "h": (S, 3600.0, 0.0), "d": (S, 86400.0, 0.0), "wk": (S, 604800.0, 0.0)}
NUM = __import__("re").compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")

def fmt(x, sig):
    if x == 0.0:
        return "0"
    dec = sig - 1 - math.floor(math.log10(abs(x)))
    scale = math.pow(10.0, dec)
    frac, whole = math.modf(abs(x * scale))
    r = math.copysign(whole + (1.0 if frac >= 0.5 else 0.0), x) / scale
    s = "%.*f" % (max(dec, 0), r)
    return s.rstrip("0").rstrip(".") if "." in s else s

def run(lines, sig):
    out, err, bad = [], [], 0
    for n, line in enumerate(lines, 1):
        if not line.strip(" \t") or line.strip(" \t").startswith("#"):
            continue
        tok = line.strip(" \t\v\f").replace("\t", " ").split()
        ok = len(tok) == 3 and NUM.fullmatch(tok[0]) and math.isfinite(float(tok[0])) and all(len(u) < 16 for u in tok[1:])
        if not ok:
            out.append(f"line {n}: expected VALUE FROM TO"); bad += 1; continue
        v, a, b = float(tok[0]), tok[1], tok[2]
        if a not in UNITS or b not in UNITS:
            out.append(f"line {n}: unknown unit '{b if a in UNITS else a}'"); bad += 1; continue
        (da, sa, oa), (db, sb, ob) = UNITS[a], UNITS[b]
        if da != db:
            out.append(f"line {n}: cannot convert {a} ({DIMS[da]}) to {b} ({DIMS[db]})"); bad += 1; continue
        base = v * sa + oa
        err.append("unitconv: %g %s = %.17g base" % (v, a, base))
        out.append(f"{fmt(v, sig)} {a} = {fmt((base - ob) / sb, sig)} {b}")
    return out, err, 1 if bad else 0

def number():
    kind = rng.randrange(6)
    if kind == 0:
        return str(rng.randint(-500, 5000))
    if kind == 1:
        return f"{rng.uniform(-1000, 1000):.{rng.randint(1, 6)}f}"
    if kind == 2:
        return f"{rng.uniform(1, 9.99):.3f}e{rng.randint(-6, 9)}"
    if kind == 3:
        return rng.choice(["0", "-0", "+12.5", ".5", "7.", "1e3", "-40", "0.000125", "98.6", "1E-2"])
    return repr(rng.uniform(-1e6, 1e6) * 10 ** rng.randint(-8, 2))

names = sorted(UNITS)
def line():
    r = rng.random()
    a = rng.choice(names)
    b = rng.choice([u for u in names if UNITS[u][0] == UNITS[a][0]])
    sep = lambda: rng.choice([" ", " ", "  ", "\t", " \t "])
    if r < 0.7:
        return rng.choice(["", " ", "\t"]) + number() + sep() + a + sep() + b + rng.choice(["", " ", "\t", "  "])
    if r < 0.78:
        return f"{number()} {a} {rng.choice(names)}"
    if r < 0.84:
        return f"{number()} {rng.choice([a, 'furlong', 'Km', 'MM', 'parsec'])} {rng.choice([b, 'cubit', 'LB'])}"
    return rng.choice([f"{number()} {a}", f"{number()} {a} {b} extra", f"12x {a} {b}", f"abc {a} {b}",
                       f"1e999 {a} {b}", f"nan {a} {b}", f"inf {a} {b}", f"1,5 {a} {b}", f"5 {a} averyveryverylongunitname",
                       "# a comment", "   # indented comment", "", "   ", f"{number()}{a} {b}"])

cases = [(["12.5 km mi", "-40 C F", "98.6 F C", "0 K C", "3 kg m", "12 furlong m"], 6)]
cases += [([line() for _ in range(rng.randint(150, 250))], sig) for sig in (6, 1, 3, 10, 15)]
cases.append((["1 mi km", "100 C F", "2.5 h min", "-459.67 F R"], 8))
ok = True
for i, (lines, sig) in enumerate(cases):
    if mode == "make":
        open(f"{T}/in{i}", "w").write("".join(l + "\n" for l in lines))
        open(f"{T}/args{i}", "w").write(f"{sig}\n")
        continue
    out, err, status = run(lines, sig)
    got = [open(f"{T}/got{i}{k}").read() for k in "ab"] + [open(f"{T}/trace{i}").read(), open(f"{T}/rc{i}").read().split()]
    ok &= got == ["".join(l + "\n" for l in out)] * 2 + ["".join(l + "\n" for l in err), [str(status)] * 2]
sys.exit(0 if ok else 1)
PY
)
seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
python3 -I - make "$T" "$seed" <<<"$REF" || exit 1
cd "$T"
for i in 0 1 2 3 4 5 6; do
  read -r sig < "args$i"
  rc=0; timeout 10 ./unitconv -p "$sig" < "in$i" > "got${i}a" 2>/dev/null || rc=$?
  rc2=0; timeout 10 ./unitconv -v -p "$sig" < "in$i" > "got${i}b" 2> "trace$i" || rc2=$?
  echo "$rc $rc2" > "rc$i"
done
python3 -I - check "$T" "$seed" <<<"$REF" || exit 1
[ "$(printf '1 mi km\n' | timeout 10 ./unitconv 2>/dev/null)" = "1 mi = 1.60934 km" ] || exit 1
rc=0; out=$(printf '1 mi km\n' | timeout 10 ./unitconv -p 0 2>/dev/null) || rc=$?
[ "$rc" = 2 ] && [ -z "$out" ] || exit 1
