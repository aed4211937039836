#!/usr/bin/env bash
# Count the duplicates, delete all but min(id) per group, add the index.
set -euo pipefail
sqlite3 sensors.db 'SELECT sensor, ts, count(*) FROM readings GROUP BY sensor, ts HAVING count(*) > 1;'
sqlite3 sensors.db 'DELETE FROM readings WHERE id NOT IN (SELECT min(id) FROM readings GROUP BY sensor, ts);'
sqlite3 sensors.db 'CREATE UNIQUE INDEX readings_sensor_ts ON readings(sensor, ts);'
sqlite3 sensors.db 'SELECT count(*) FROM readings;'
