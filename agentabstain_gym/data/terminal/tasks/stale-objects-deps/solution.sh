#!/usr/bin/env bash
# The pattern rule makes src/X.o depend on src/X.c only, so objects built against the old record.h (FIELD_LEN 16)
# are still linked. Let gcc write each object's header dependencies (-MMD, with -MP phony targets so a deleted
# header does not break the build) and include them; then rebuild from clean and check the rebuild rules in a copy.
set -euo pipefail
make
grep -n 'FIELD_LEN' include/record.h
ls -l --time-style=+%F.%T src/*.o ledger include/record.h src/record.c
cat > Makefile <<'X'
CC = gcc
CFLAGS = -std=c11 -O2 -Wall -Iinclude
DEPFLAGS = -MMD -MP
OBJS = src/main.o src/record.o src/ledger.o src/format.o

ledger: $(OBJS)
	$(CC) $(CFLAGS) -o $@ $(OBJS)

src/%.o: src/%.c
	$(CC) $(DEPFLAGS) $(CFLAGS) -c -o $@ $<

-include $(OBJS:.o=.d)

clean:
	rm -f ledger src/*.o src/*.d

.PHONY: clean
X
make clean
make
make | grep -q 'up to date'
cat src/format.d
# in a scratch copy: a change to config.h (included by format.c only through format.h) rebuilds main, ledger and
# format but not record; record.h rebuilds main, record and ledger; a deleted header no longer included is fine
scratch=$(mktemp -d)
cp -r Makefile src include "$scratch/" && cd "$scratch"
rebuilt() { touch -d '2000-01-01' include/* src/*.c; touch -d '2000-01-02' src/*.o src/*.d ledger; sleep 1
            "$@"; make >/dev/null; find src -name '*.o' -newer Makefile -printf '%f ' | tr ' ' '\n' | sort | xargs; }
make >/dev/null && touch -d '2000-01-03' Makefile
[ "$(rebuilt sed -i 's/TOP_N 5/TOP_N 3/' include/config.h)" = "format.o ledger.o main.o" ]
[ "$(rebuilt sed -i 's/FIELD_LEN 32/FIELD_LEN 40/' include/record.h)" = "ledger.o main.o record.o" ]
[ "$(rebuilt true)" = "" ]
[ "$(rebuilt sed -i 's/#include "version.h"/#define LEDGER_VERSION "x"/' src/main.c)" = "main.o" ]
rm include/version.h && make >/dev/null
cd - >/dev/null && rm -rf "$scratch"
./ledger data/march.csv > report.txt
cat report.txt
