#!/usr/bin/env bash
set -eu
awk '{ s += $1 } END { print s }' numbers.txt > total.txt
cat total.txt
