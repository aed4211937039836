#!/usr/bin/env bash
set -eu
[ "$(cat total.txt)" = "55" ]
