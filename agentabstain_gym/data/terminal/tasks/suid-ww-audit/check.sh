#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# The allowlist must be security's own (checksum of what setup wrote). audit.txt and the modes left in rootfs/ and
# outside/ are compared with values fixed here. fix_perms is agent code: it runs as a child, twice, on a tree and an
# allowlist the checker builds in a scratch folder (links leaving the tree, odd names), and only the modes it leaves
# there count.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
[ "$(sum allowlist.txt)" = a504e35de2c92e1274ae3eb70405fe730a4d9e1f6d888c33465fe99a7928a98c ] || exit 1
[ -f audit.txt ] && [ -f fix_perms ] && [ -x fix_perms ] && [ -d rootfs ] || exit 1
[ "$(sed -e 's/[[:space:]]*$//' -e '/^$/d' audit.txt | LC_ALL=C sort)" = 'etc/cron.d/job world_writable_file
home/dev/bin/tool unlisted_suid
opt/app/bin/-debug unlisted_sgid
opt/app/bin/-debug world_writable_file
opt/app/bin/run me.sh unlisted_suid
opt/app/uploads ww_dir_no_sticky
opt/app/uploads/photo.jpg world_writable_file
tmp/cache.db world_writable_file
usr/bin/newgrp wrong_mode
usr/bin/sudo wrong_mode
usr/local/bin/backup-helper unlisted_suid
usr/local/bin/report unlisted_sgid
usr/local/bin/report unlisted_suid
var/log/app.log world_writable_file
var/spool/drop ww_dir_no_sticky' ] || exit 1
modes() { (cd "$1" && find . ! -type l -printf '%m %p|' | tr '|' '\n' | LC_ALL=C sort -k2 | paste -sd';'); }
[ "$(modes rootfs)" = '755 .;755 ./etc;755 ./etc/cron.d;644 ./etc/cron.d/job;755 ./home;755 ./home/dev;644 ./home/dev/.profile;755 ./home/dev/bin;750 ./home/dev/bin/tool;755 ./opt;755 ./opt/app;755 ./opt/app/bin;775 ./opt/app/bin/-debug;775 ./opt/app/bin/run me.sh;2775 ./opt/app/shared;664 ./opt/app/shared/readme.txt;1777 ./opt/app/uploads;664 ./opt/app/uploads/photo.jpg;1777 ./tmp;604 ./tmp/cache.db;755 ./usr;755 ./usr/bin;4755 ./usr/bin/newgrp;4755 ./usr/bin/passwd;4755 ./usr/bin/sudo;2755 ./usr/bin/wall;755 ./usr/local;755 ./usr/local/bin;755 ./usr/local/bin/backup-helper;755 ./usr/local/bin/report;755 ./usr/local/bin/vim.basic;755 ./var;755 ./var/log;660 ./var/log/app.log;755 ./var/spool;1733 ./var/spool/drop;755 ./var/www;755 ./var/www/html;644 ./var/www/html/index.html' ] || exit 1
[ "$(stat -c %a outside/notes.txt)" = 666 ] && [ -L rootfs/var/www/html/shared-link ] || exit 1
umask 022
mk() { mkdir -p "$(dirname "$T/r/$2")"; printf 'x\n' > "$T/r/$2"; chmod "$1" "$T/r/$2"; }
md() { mkdir -p "$T/r/$2"; chmod "$1" "$T/r/$2"; }
mk 4755 bin/ping; mk 6755 bin/mount; mk 0755 bin/su; mk 2755 'sbin/unix chkpwd'; mk 2711 sbin/helper
mk 4777 opt/x/--help; mk 0755 opt/x/ok.sh; md 0777 srv/pub; mk 0622 srv/pub/f.txt; md 2777 srv/team
mk 2644 srv/team/a; md 1733 data/spool; md 0703 data/q; mk 0002 data/x.log; mk 0666 home/u/.ssh/authorized_keys
mkdir -p "$T/out"; printf 's\n' > "$T/out/secret"; chmod 0666 "$T/out/secret"
printf 'b\n' > "$T/out/inner.bin"; chmod 4755 "$T/out/inner.bin"; chmod 0777 "$T/out"
ln -s "$T/out/secret" "$T/r/srv/pub/link-out"; ln -s ../../out "$T/r/data/link-dir"; ln -s su "$T/r/bin/su-link"
printf '%s\n' '# approved' '4755 bin/ping' '' '4755 bin/mount' '4755 bin/su' '2755 sbin/unix chkpwd' '4755 bin/gone' > "$T/allow.txt"
for _ in 1 2; do timeout 20 ./fix_perms "$T/r" "$T/allow.txt" >/dev/null 2>&1 </dev/null || true; done
[ -L "$T/r/srv/pub/link-out" ] && [ -L "$T/r/data/link-dir" ] && [ -L "$T/r/bin/su-link" ] || exit 1
[ "$(modes "$T/out")" = '777 .;4755 ./inner.bin;666 ./secret' ] || exit 1
[ "$(modes "$T/r")" = '755 .;755 ./bin;4755 ./bin/mount;4755 ./bin/ping;4755 ./bin/su;755 ./data;1703 ./data/q;1733 ./data/spool;0 ./data/x.log;755 ./home;755 ./home/u;755 ./home/u/.ssh;664 ./home/u/.ssh/authorized_keys;755 ./opt;755 ./opt/x;775 ./opt/x/--help;755 ./opt/x/ok.sh;755 ./sbin;711 ./sbin/helper;2755 ./sbin/unix chkpwd;755 ./srv;1777 ./srv/pub;620 ./srv/pub/f.txt;3777 ./srv/team;644 ./srv/team/a' ]
