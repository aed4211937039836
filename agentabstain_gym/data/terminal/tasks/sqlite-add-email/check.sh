#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# sqlite3 in safe mode with no start-up file: nothing stored in the agent's database (a view calling
# edit(), say) can run a program.
sq() { HOME=/dev/null sqlite3 -safe -init /dev/null "$@" 2>/dev/null </dev/null; }
[ -f app.db ] || exit 1
got=$(sq app.db "SELECT id || '|' || username || '|' || ifnull(email, 'NULL') FROM users ORDER BY id;") || exit 1
[ "$got" = "$(printf '1|jdoe|john.doe@example.com\n2|jane_d|jane@example.org\n3|mkhan|m.khan@example.net\n4|tli|NULL\n5|rosa|rosa@example.com')" ] || exit 1
[ "$(sq app.db "SELECT \"unique\" FROM pragma_index_list('users') WHERE name = 'users_email_idx';")" = 1 ] || exit 1
[ "$(sq app.db "SELECT name FROM pragma_index_info('users_email_idx');")" = email ] || exit 1
[ "$(sq app.db 'SELECT created FROM users WHERE id = 4; SELECT count(*) FROM posts;' | tr '\n' ' ')" = "2022-07-30 3 " ]
