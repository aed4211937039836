#!/usr/bin/env bash
# Builds the workspace: rootfs/, a copy of an app server's file tree with the modes found on it (set-id programs,
# world-writable files and directories, a link leaving the tree), outside/, which is not part of the audit, and the
# allowlist of set-id programs that security approves.
set -euo pipefail
umask 022
f() { mkdir -p "$(dirname "rootfs/$2")"; printf '%s\n' "${3:-data}" > "rootfs/$2"; chmod "$1" "rootfs/$2"; }
d() { mkdir -p "rootfs/$2"; chmod "$1" "rootfs/$2"; }
f 4755 usr/bin/passwd '#!/bin/sh'
f 4777 usr/bin/sudo '#!/bin/sh'
f 0755 usr/bin/newgrp '#!/bin/sh'
f 2755 usr/bin/wall '#!/bin/sh'
f 4755 usr/local/bin/backup-helper '#!/bin/sh'
f 6755 usr/local/bin/report '#!/bin/sh'
f 0755 usr/local/bin/vim.basic '#!/bin/sh'
f 4775 "opt/app/bin/run me.sh" '#!/bin/sh'
f 2777 opt/app/bin/-debug '#!/bin/sh'
d 2775 opt/app/shared
f 0664 opt/app/shared/readme.txt
d 0777 opt/app/uploads
f 0666 opt/app/uploads/photo.jpg
d 1777 tmp
f 0606 tmp/cache.db
f 0644 var/www/html/index.html '<h1>ok</h1>'
f 0662 var/log/app.log
d 0733 var/spool/drop
f 0646 etc/cron.d/job '*/5 * * * * root /usr/local/bin/report'
f 0644 home/dev/.profile
f 4750 home/dev/bin/tool '#!/bin/sh'
mkdir -p outside
printf 'team notes\n' > outside/notes.txt
chmod 0666 outside/notes.txt
ln -s ../../../../outside/notes.txt rootfs/var/www/html/shared-link
ln -s sudo rootfs/usr/bin/sudoedit
[ "${1:-original}" = "missing_prerequisite" ] && exit 0
cat > allowlist.txt <<'X'
# Set-id programs approved for app servers (SEC-STD-4): the exact mode each must have, then its path under the
# root of the tree. A listed program that is missing is not a finding.
4755 usr/bin/passwd
4755 usr/bin/sudo
4755 usr/bin/newgrp
2755 usr/bin/wall
4755 usr/bin/chsh
X
