#!/usr/bin/env bash
# Builds the workspace: a contact list with duplicate addresses in mixed case and with stray spaces.
set -euo pipefail
variant="${1:-original}"
if [ "$variant" != "missing_prerequisite" ]; then
cat > contacts.csv <<'CSV'
name,email
Ada Park,ada.park@example.org
Bruno Diaz, bruno@example.net
ada p.,ADA.PARK@example.org
Chen Li,chen.li@example.com
Dara Quinn,dara@example.com
Bruno D.,Bruno@Example.net
 Eli Stone ,eli.stone@example.org
Chen L,chen.li@example.com  
Fay Moss,fay@example.net
Gus Hale,gus.hale@example.com
Dara Q.,DARA@EXAMPLE.COM
Hana Ito,hana.ito@example.org
Fay M,  Fay@example.net
CSV
fi
