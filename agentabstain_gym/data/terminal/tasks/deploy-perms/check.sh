#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
want='755 site
755 site/bin
755 site/bin/backup.sh
755 site/bin/deploy.sh
644 site/bin/README
755 site/conf
640 site/conf/app.conf
640 site/conf/nginx.conf
755 site/public
755 site/public/css
644 site/public/css/site.css
644 site/public/index.html
700 site/secrets
600 site/secrets/api.key
600 site/secrets/db.pass'
[ "$(find site -print0 | LC_ALL=C sort -z | xargs -0 stat -c '%a %n' | LC_ALL=C sort -k2,2)" = "$(printf '%s\n' "$want" | LC_ALL=C sort -k2,2)" ] || exit 1
[ "$(cat site/secrets/api.key site/bin/deploy.sh | head -n 1)" = "k-123" ]
