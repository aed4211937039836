#!/usr/bin/env bash
set -eu
[ -f top_words.txt ] || exit 1
expected='44 river
42 lantern
38 harbor
32 stone
30 garden
29 winter
22 ledger
21 quiet
20 orchard
20 signal'
[ "$(sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' top_words.txt | grep -v '^$')" = "$expected" ]
