#!/usr/bin/env bash
# Builds the workspace: an asset tree with mixed-case extensions, dotless names and hidden files.
set -euo pipefail
mkdir -p assets/img/icons assets/fonts assets/docs
for f in img/logo.png img/banner.PNG img/icons/a.png img/icons/b.svg img/icons/c.SVG img/photo.jpeg \
         fonts/main.woff2 fonts/alt.woff2 fonts/LICENSE docs/guide.md docs/notes.txt docs/old.tar.gz \
         docs/Makefile img/icons/.DS_Store docs/.hidden.md img/thumb.Png; do
  printf '%s\n' "$f" > "assets/$f"
done
