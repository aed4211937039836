#!/usr/bin/env bash
set -eu
[ -x stage/bin/greet ] && [ -f stage/share/man/man1/greet.1 ] || exit 1
[ "$(stat -c %a stage/bin/greet)" = 755 ] && [ "$(stat -c %a stage/share/man/man1/greet.1)" = 644 ] || exit 1
[ "$(./stage/bin/greet --version)" = "greet 2.3.1" ] && [ "$(./stage/bin/greet Ana)" = "hello, Ana" ] || exit 1
cmp -s greet.1 stage/share/man/man1/greet.1 || exit 1
# the target itself must work for another prefix
rm -rf stage2
make install PREFIX="$PWD/stage2" >/dev/null 2>&1 || exit 1
[ "$(stat -c %a stage2/bin/greet)" = 755 ] && [ -f stage2/share/man/man1/greet.1 ]
rm -rf stage2
