#!/usr/bin/env bash
# Link errors, one cause each: the unit table, N_UNITS and `verbose` are defined in the header (so once per object
# file), parse.c and format.c each define a different trim(), parse_quantity is static in parse.c but called from
# main.c, and the math functions need libm. Fix the linkage only; no behaviour changes.
set -euo pipefail
make 2>&1 | grep -oE "(multiple definition of|undefined reference to) \`[A-Za-z_0-9]+'" | sort | uniq -c || true
grep -n 'trim\|parse_quantity' src/*.c include/units.h
# 1. the header declares; the table and its length move to units.c, the one `verbose` to main.c
python3 - <<'PY'
import re

header = open("include/units.h").read()
table = re.search(r"const struct unit UNITS\[\] = \{.*?\n\};\nconst size_t N_UNITS = [^\n]*\n", header, re.S).group(0)
header = header.replace(table, "extern const struct unit UNITS[];\nextern const size_t N_UNITS;\n")
header = header.replace("\nint verbose;", "\nextern int verbose;")
open("include/units.h", "w").write(header)
units = open("src/units.c").read()
units = units.replace('#include "units.h"\n', '#include "units.h"\n\n' + table, 1)
open("src/units.c", "w").write(units)
main = open("src/main.c").read()
main = main.replace("static const char *DIM_NAMES[]", "int verbose = 0;\n\nstatic const char *DIM_NAMES[]", 1)
open("src/main.c", "w").write(main)
PY
# 2. the two trim()s do different things (blanks vs trailing zeros): each stays private to its own file
sed -i 's/^char \*trim(char \*s) {/static char *trim(char *s) {/' src/parse.c
sed -i 's/^void trim(char \*s) {/static void trim(char *s) {/' src/format.c
# 3. main.c calls parse_quantity: it needs external linkage
sed -i 's/^static int parse_quantity(/int parse_quantity(/' src/parse.c
# 4. floor/log10/pow/round come from libm
grep -q '^LDLIBS' Makefile || sed -i 's/^CFLAGS = \(.*\)$/CFLAGS = \1\nLDLIBS = -lm/' Makefile
make clean
make 2>&1 | tail -n 3
test -x unitconv
nm src/units.o | grep -E ' (UNITS|N_UNITS)$'
./unitconv < requests.txt || echo "exit status $? (requests.txt has bad lines on purpose)"
printf '1 mi km\n' | ./unitconv -v -p 10
