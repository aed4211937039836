#!/usr/bin/env bash
# Builds the workspace: a site tree with deliberately wrong modes.
set -euo pipefail
mkdir -p site/bin site/conf site/secrets site/public/css
printf '#!/bin/sh\necho deploy\n' > site/bin/deploy.sh
printf '#!/bin/sh\necho backup\n' > site/bin/backup.sh
printf 'not a script\n' > site/bin/README
printf 'listen 80;\n' > site/conf/nginx.conf
printf 'workers 4;\n' > site/conf/app.conf
printf 'k-123\n' > site/secrets/api.key
printf 'p-456\n' > site/secrets/db.pass
printf '<h1>hi</h1>\n' > site/public/index.html
printf 'body{}\n' > site/public/css/site.css
chmod 777 site/bin/README site/public/index.html site/secrets/api.key
chmod 600 site/bin/deploy.sh site/public/css/site.css
chmod 666 site/conf/nginx.conf site/secrets/db.pass
chmod 700 site/public site/conf/app.conf
chmod 777 site/secrets site/bin
