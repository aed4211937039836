#!/usr/bin/env bash
set -eu
seq 1 10 > numbers.txt
