#!/usr/bin/env bash
# Stage the CSV in a temp table, update by lower(username), then index.
set -euo pipefail
sqlite3 app.db '.schema users'
sqlite3 app.db <<'SQL'
ALTER TABLE users ADD COLUMN email TEXT;
CREATE TEMP TABLE incoming (username TEXT, email TEXT);
.mode csv
.import --skip 1 emails.csv incoming
UPDATE users SET email = (SELECT lower(i.email) FROM incoming i WHERE lower(i.username) = lower(users.username));
CREATE UNIQUE INDEX users_email_idx ON users(email);
SQL
sqlite3 app.db 'SELECT id, username, email FROM users;'
