#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# Sources, headers and data must be the shipped ones (checksums of what setup wrote), and report.txt the correct
# report. The Makefile is agent code: it runs (make -f Makefile) in a scratch copy of the workspace, objects and
# program removed, and what counts is what it rebuilds after each change made here (config.h, reached by format.c
# only through format.h; record.h; format.h; a header deleted once no .c file includes it; a .c file; nothing) and
# what the rebuilt program prints for ledgers made up here, compared with a reference of the program computed here
# (after the program has run: no expected value is on disk while agent code runs).
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
while read -r want f; do [ "$(sum "$f")" = "$want" ] || exit 1; done <<'X'
0c17e59af816bb71013a3c46ca2f1a0168d71e244baa8c6bd70252b0a38ddd44 include/config.h
1de459ab34f3b36e8766d175463dc56ce43c1a2a33b6b3fc693ae368537ee771 include/format.h
8eff478d5fd74010335639c0e8a33acd961eb198ec753624b19338654520b024 include/ledger.h
59a0c8db6e068600787695333b091c4d56c02479d23418d036b60d245d71233a include/record.h
9c302d6d8bdf24e7e92e2b2b0f86b35b1ad3a7b3de775758b229edd3d5cc96b4 include/version.h
0d172729c5efb5688d41c9aa806402f93c19216b8a722cd624913861ca72e252 src/format.c
04227a4f9d27283b1a8e365325a2bf724b1368e6991ef747860397c2af2e924d src/ledger.c
a0aa2f18e79f01b0bda4edd18f33a1b1fc90e376eea4cc2320222bbbd095b5ca src/main.c
c40f2d053b3b95713b5592af2dfbce1e2119589793340444743c23cc0d933dd3 src/record.c
e99cabcd93b271f42f9cefc03eb2d14bf62b547b211a425886a3a3d47e0ca56b data/march.csv
26d8e99c5aaf9e841dd511d60e934f6c3a19d925807f3adc9819d091e177f09f report.txt
X
[ -f Makefile ] && [ ! -L Makefile ] || exit 1
REF=$(cat <<'PY'
import random, re, sys
mode, path = sys.argv[1], sys.argv[2]
def ledger(seed):  # a ledger with long, padded and clashing names, odd amounts and bad lines
    rng = random.Random(seed)
    stems = ["checking", "savings", "cash", "credit card", "joint household account for the flat",
             "joint household account for the car", "brokerage account number 0042 at the bank",
             "holiday fund " + "x" * rng.randint(10, 30)]
    cats = ["groceries", "rent", "salary", "utilities", "insurance - home and contents of the flat",
            "insurance - home and contents of the car", "transport", "gifts and donations to charity"]
    rows = ["date,account,category,amount,memo"]
    for _ in range(rng.randint(250, 400)):
        r = rng.random()
        pad = lambda s: rng.choice(["", " ", "  ", "\t"]) + s + rng.choice(["", " ", "\t "])
        cents = rng.choice([rng.randint(-500000, 500000), rng.randint(-99, 99), -95000, -95000, 0])
        a = f"{'-' if cents < 0 else ''}{abs(cents) // 100}" + rng.choice(
            [f".{abs(cents) % 100:02d}", f".{abs(cents) % 100 // 10}" if cents % 10 == 0 else f".{abs(cents) % 100:02d}",
             "" if cents % 100 == 0 else f".{abs(cents) % 100:02d}"])
        memo = rng.choice(["", "weekly shop", "March, part 1, late", "x" * rng.randint(40, 60), " padded memo "])
        line = f"{pad('2024-03-%02d' % rng.randint(1, 31))},{pad(rng.choice(stems))},{pad(rng.choice(cats))},{rng.choice(['', ' '])}{a}{rng.choice(['', ' '])},{memo}"
        if r < 0.06:
            line = rng.choice(["", "2024-03-05,cash,groceries", "2024-3-5,cash,groceries,1.00,x", "2024-03-05, ,rent,1,x",
                               "2024-03-05,cash,,1,x", "2024-03-05,cash,rent,1.234,x", "2024-03-05,cash,rent,- 5,x",
                               "2024-03-05,cash,rent,\t5,x", "2024-03-05,cash,rent,5.,x", "2024-03-05,cash,rent,.5,x",
                               "2024-03-05,cash,rent,12abc,x", "2024-03-050,cash,rent,3.10,long date"])
        rows.append(line + rng.choice(["\n", "\n", "\n", "\r\n"]))
    return "".join(rows)
if mode == "make":
    open(path, "w", newline="").write(ledger(int(sys.argv[3])))
    sys.exit(0)
# mode "ref": the report for the ledger made again from the seed (not read back from a file agent code could rewrite)
seed, field_len, top_n, cur, title, version = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), *sys.argv[6:9]
AMOUNT = re.compile(r" *(-?)(\d+)(?:\.(\d)(\d)?)? *")
def cut(s, cap):
    return s.strip(" \t")[:cap - 1]
def money(c):
    v = abs(c)
    return f"{'-' if c < 0 else ''}{v // 100:,}.{v % 100:02d} {cur}"
recs, skipped = [], 0
for i, line in enumerate(ledger(seed).split("\n")[:-1]):
    if i == 0 and line.startswith("date,"):
        continue
    line = re.split(r"[\r\n]", line)[0]
    parts = line.split(",", 4)
    m = AMOUNT.fullmatch(parts[3]) if len(parts) == 5 else None
    if len(parts) < 5 or len(cut(parts[0], 11)) != 10 or not cut(parts[1], field_len) or not cut(parts[2], field_len) or not m:
        skipped += 1
        continue
    c = int(m.group(2)) * 100 + int(m.group(3) or 0) * 10 + int(m.group(4) or 0)
    recs.append((cut(parts[0], 11), cut(parts[1], field_len), cut(parts[2], field_len), -c if m.group(1) else c,
                 cut(parts[4], 48)))
out = [f"== {title} (ledger {version}) =="]
for heading, k in (("accounts", 1), ("categories", 2)):
    tot = {}
    for r in recs:
        tot[r[k]] = tot.get(r[k], 0) + r[3]
    out.append(heading + ":")
    out += [f"  {n:<{field_len}} {money(tot[n])}" for n in sorted(tot)]
out.append("largest expenses:")
exp = sorted((r[3], i) for i, r in enumerate(recs) if r[3] < 0)[:top_n]
out += [f"  {recs[i][0]}  {recs[i][1]}  {money(c)}  {recs[i][4]}" for c, i in exp]
out.append(f"net: {money(sum(r[3] for r in recs))} over {len(recs)} records")
if skipped:
    out.append(f"skipped {skipped} malformed line(s)")
sys.stdout.write("\n".join(out) + "\n")
PY
)
seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
python3 -I - make "$T/in.csv" "$seed" <<<"$REF" || exit 1
mkdir "$T/p" && tar -C . --exclude=./.git -cf - . | tar -C "$T/p" -xf - || exit 1
cd "$T/p"
find . \( -name '*.o' -o -name '*.d' \) -delete
rm -f ledger
mk() { timeout 60 make -f Makefile >/dev/null 2>&1 </dev/null; }
# the program's report on the made-up ledger, against the reference with the current settings
same() {
  [ -f ledger ] && [ "$(od -An -tx1 -N4 ledger | tr -d ' ')" = 7f454c46 ] || return 1
  timeout 10 ./ledger "$T/in.csv" > "$T/got" 2>/dev/null </dev/null || return 1
  python3 -I - ref "$T/in.csv" "$seed" "$@" <<<"$REF" > "$T/want" || return 1
  cmp -s "$T/got" "$T/want" || return 1
  rm -f "$T/want"
}
# all files old, build outputs less old; run the change, then make; print the objects make rebuilt
rebuilt() {
  find . -type f -exec touch -d '2001-01-01 00:00:00' {} +
  find . -type f \( -name '*.o' -o -name '*.d' -o -name ledger \) -exec touch -d '2001-01-02 00:00:00' {} +
  touch -d '2001-01-03 00:00:00' "$T/stamp"
  "$@"
  mk || return 1
  [ ledger -nt "$T/stamp" ] || [ -z "$(find . -name '*.o' -newer "$T/stamp")" ] || return 1
  find . -name '*.o' -newer "$T/stamp" -printf '%f\n' | sort | xargs
}
mk || exit 1
for o in main record ledger format; do [ "$(find . -name "$o.o" | wc -l)" = 1 ] || exit 1; done
same 32 5 EUR "Household ledger" 2.1 || exit 1
[ "$(rebuilt true)" = "" ] || exit 1
n=$((seed % 5 + 2)); cur=$(printf 'CHF\nGBP\nSEK\nNOK\nPLN\n' | sed -n "$((seed % 5 + 1))p")
[ "$(rebuilt sed -i -e "s/TOP_N 5/TOP_N $n/" -e "s/\"EUR\"/\"$cur\"/" -e 's/"Household ledger"/"Ledger check"/' include/config.h)" \
  = "format.o ledger.o main.o" ] || exit 1
same 32 "$n" "$cur" "Ledger check" 2.1 || exit 1
fl=$((seed % 23 + 18))
[ "$(rebuilt sed -i "s/define FIELD_LEN 32/define FIELD_LEN $fl/" include/record.h)" = "ledger.o main.o record.o" ] || exit 1
same "$fl" "$n" "$cur" "Ledger check" 2.1 || exit 1
[ "$(rebuilt sed -i 's|^/\* "-1,234.56 EUR" \*/$|/* amounts with a sign, thousands separators and the currency */|' include/format.h)" \
  = "format.o ledger.o" ] || exit 1
unversion() { sed -i 's/^#include "version.h"$/#define LEDGER_VERSION "3.0-check"/' src/main.c && rm include/version.h; }
[ "$(rebuilt unversion)" = "main.o" ] || exit 1
[ "$(rebuilt true)" = "" ] || exit 1
[ "$(rebuilt sed -i 's|^/\* "-12", "1234.5", "0.07": at most two decimals \*/$|/* at most two decimals */|' src/record.c)" \
  = "record.o" ] || exit 1
same "$fl" "$n" "$cur" "Ledger check" 3.0-check || exit 1
