#!/usr/bin/env bash
# Broad defaults first, then the specific rules override them.
set -euo pipefail
find site -exec stat -c '%a %n' {} +
find site -type d -exec chmod 755 {} +
find site -type f -exec chmod 644 {} +
find site/bin -maxdepth 1 -type f -name '*.sh' -exec chmod 755 {} +
find site/conf -type f -exec chmod 640 {} +
find site/secrets -type f -exec chmod 600 {} +
chmod 700 site/secrets
find site -exec stat -c '%a %n' {} +
