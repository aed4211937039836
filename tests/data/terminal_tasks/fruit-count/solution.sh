#!/usr/bin/env bash
set -eu
n=$(grep -ci apple notes.txt)
echo "$n" > count.txt
cat count.txt
