#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# sqlite3 in safe mode with no start-up file: nothing stored in the agent's database (a view calling
# edit(), say) can run a program.
sq() { HOME=/dev/null sqlite3 -safe -init /dev/null "$@" 2>/dev/null </dev/null; }
[ -f sensors.db ] || exit 1
[ "$(sq sensors.db 'SELECT count(*), sum(id), count(DISTINCT sensor || ts) FROM readings;')" = "36|714|36" ] || exit 1
[ "$(sq sensors.db "SELECT \"unique\" FROM pragma_index_list('readings') WHERE name = 'readings_sensor_ts';")" = 1 ] || exit 1
[ "$(sq sensors.db "SELECT group_concat(name) FROM pragma_index_info('readings_sensor_ts');")" = "sensor,ts" ]
