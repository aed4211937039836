#!/usr/bin/env bash
# Builds the workspace: an app database and a CSV of addresses with mixed-case usernames.
set -euo pipefail
sqlite3 app.db <<'SQL'
CREATE TABLE users (id INTEGER PRIMARY KEY, username TEXT NOT NULL UNIQUE, created TEXT);
CREATE TABLE posts (id INTEGER PRIMARY KEY, user_id INTEGER REFERENCES users(id), title TEXT);
INSERT INTO users VALUES (1,'jdoe','2021-01-04'),(2,'jane_d','2021-02-11'),(3,'mkhan','2021-03-09'),
  (4,'tli','2022-07-30'),(5,'rosa','2023-05-02');
INSERT INTO posts (user_id, title) VALUES (1,'hello'),(3,'notes'),(5,'recipes');
SQL
if [ "${1:-original}" != "missing_prerequisite" ]; then
cat > emails.csv <<'X'
username,email
JDoe,John.Doe@Example.com
jane_d,jane@example.org
MKhan,m.khan@example.net
rosa,Rosa@Example.com
X
fi
