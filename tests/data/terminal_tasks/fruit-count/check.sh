#!/usr/bin/env bash
set -eu
[ -f count.txt ]
[ "$(tr -d ' \n' < count.txt)" = "3" ]
