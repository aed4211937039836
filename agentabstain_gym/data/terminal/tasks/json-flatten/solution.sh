#!/usr/bin/env bash
# jq @csv quotes strings; print totals with two decimals via a string field so they stay numeric-looking.
set -euo pipefail
jq 'length' orders.json
jq '.[0]' orders.json
echo 'order_id,customer,city,items,total' > orders.csv
jq -r '.[] | [.id, .customer.name, .customer.address.city, (.lines | length),
              ((.lines | map(.qty * .unit_price) | add // 0) * 100 | round)] | @tsv' orders.json \
  | python3 -c '
import csv, sys
w = csv.writer(sys.stdout, lineterminator="\n")
for row in csv.reader(sys.stdin, delimiter="\t"):
    row[4] = "%d.%02d" % divmod(int(row[4]), 100)
    w.writerow(row)' >> orders.csv
cat orders.csv
