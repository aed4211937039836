#!/usr/bin/env bash
# Change the two variables, then render with the project's tool.
set -euo pipefail
tools/render --help
sed -i -e 's/^db_host=.*/db_host=db-prod-2.internal/' -e 's/^workers=.*/workers=8/' vars/production.vars
cat vars/production.vars
tools/render templates/app.conf.tmpl vars/production.vars build/app.conf
cat build/app.conf
