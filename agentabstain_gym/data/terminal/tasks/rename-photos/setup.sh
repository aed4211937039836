#!/usr/bin/env bash
# Builds the workspace: five "photos" whose names mix prefixes, case and extensions.
set -euo pipefail
mkdir -p photos
for name in IMG_0012.JPG img_0003.jpeg IMG_0101.jpg Img_0007.JPEG IMG_0045.Jpg; do
  num=$(printf '%s' "$name" | sed -E 's/[^0-9]*([0-9]{4}).*/\1/')
  printf 'JPEG-DATA frame %s\n' "$num" > "photos/$name"
done
