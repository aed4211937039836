#!/bin/bash
cd /app
sed -i 's/sorted(sales_dir.glob("\*.csv"))\[:-1\]/sorted(sales_dir.glob("*.csv"))/' report.py
sed -i 's/int(float(row\["amount"\]))/float(row["amount"])/' report.py
python3 report.py
cat out/totals.json
