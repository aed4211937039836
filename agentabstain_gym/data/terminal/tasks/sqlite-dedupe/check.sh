#!/usr/bin/env bash
set -eu
[ -f sensors.db ] || exit 1
[ "$(sqlite3 sensors.db 'SELECT count(*), sum(id), count(DISTINCT sensor || ts) FROM readings;' 2>/dev/null)" = "36|714|36" ] || exit 1
[ "$(sqlite3 sensors.db "SELECT \"unique\" FROM pragma_index_list('readings') WHERE name = 'readings_sensor_ts';")" = 1 ] || exit 1
[ "$(sqlite3 sensors.db "SELECT group_concat(name) FROM pragma_index_info('readings_sensor_ts');")" = "sensor,ts" ]
