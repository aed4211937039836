#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
[ -f contacts_clean.csv ] || exit 1
expected='name,email
Ada Park,ada.park@example.org
Bruno Diaz,bruno@example.net
Chen Li,chen.li@example.com
Dara Quinn,dara@example.com
Eli Stone,eli.stone@example.org
Fay Moss,fay@example.net
Gus Hale,gus.hale@example.com
Hana Ito,hana.ito@example.org'
[ "$(sed 's/[[:space:]]*$//' contacts_clean.csv | grep -v '^$')" = "$expected" ]
