#!/usr/bin/env bash
set -eu
[ "$(cat report.txt)" = "quarterly: 42" ]
