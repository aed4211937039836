#!/usr/bin/env bash
# Rename each file from the digits in its name; the content stays as it is.
set -euo pipefail
cd photos
ls -1
for f in *; do
  num=$(printf '%s' "$f" | sed -E 's/[^0-9]*([0-9]{4}).*/\1/')
  [ "$f" = "photo-$num.jpg" ] || mv -n -- "$f" "photo-$num.jpg"
done
ls -1
