#!/usr/bin/env bash
# Normalise email, name and phone as stated, link records on email or on name + phone, and take connected
# components with a union-find so that chains of records end up in one customer.
set -euo pipefail
head -n 12 customers.csv
cat > dedupe.py <<'PY'
"""Deduplicate customer records: same email, or same name and phone, linked transitively."""
import csv
import re
import sys
import unicodedata

TITLES = {"mr", "mrs", "ms", "dr"}


def norm_email(s):
    s = s.strip().lower()
    if "@" not in s:
        return ""
    local, _, domain = s.rpartition("@")
    local = local.split("+", 1)[0]
    if domain in ("gmail.com", "googlemail.com"):
        local, domain = local.replace(".", ""), "gmail.com"
    return f"{local}@{domain}"


def norm_name(s):
    s = "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c)).lower()
    words = re.sub(r"[^\w\s]", "", s).split()
    if words and words[0] in TITLES:
        words = words[1:]
    return " ".join(sorted(words))


def norm_phone(s):
    digits = re.sub(r"\D", "", s)
    return digits[-9:] if len(digits) >= 9 else ""


def main(path):
    with open(path, newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r.get("id", "").strip()]
    rows.sort(key=lambda r: int(r["id"]))
    parent = list(range(len(rows)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first_seen = {}
    for i, r in enumerate(rows):
        email, phone = norm_email(r["email"]), norm_phone(r["phone"])
        keys = [("e", email)] if email else []
        if phone:
            keys.append(("np", norm_name(r["name"]), phone))
        for key in keys:
            j = first_seen.setdefault(key, i)
            a, b = find(i), find(j)
            if a != b:
                parent[max(a, b)] = min(a, b)
    groups = {}
    for i in range(len(rows)):
        groups.setdefault(find(i), []).append(i)
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["id", "name", "ids"])
    for root in sorted(groups):
        members = groups[root]
        out.writerow([rows[root]["id"].strip(), rows[root]["name"].strip(),
                      " ".join(rows[m]["id"].strip() for m in members)])


if __name__ == "__main__":
    main(sys.argv[1])
PY
python3 dedupe.py customers.csv > customers_dedup.csv
wc -l customers.csv customers_dedup.csv
python3 -c 'import csv; rows = list(csv.DictReader(open("customers_dedup.csv")))
print(len(rows), "customers,", sum(" " in r["ids"] for r in rows), "with more than one record")'
