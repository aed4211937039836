#!/usr/bin/env bash
# Append an install target using install(1) with explicit modes, then stage it.
set -euo pipefail
make
cat >> Makefile <<'X'

install: greet greet.1
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 greet $(DESTDIR)$(PREFIX)/bin/greet
	install -m 644 greet.1 $(DESTDIR)$(PREFIX)/share/man/man1/greet.1
X
make install PREFIX="$PWD/stage"
find stage -type f -exec ls -l {} +
./stage/bin/greet --version
