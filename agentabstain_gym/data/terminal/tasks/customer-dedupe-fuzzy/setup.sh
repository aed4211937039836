#!/usr/bin/env bash
# Builds the workspace: a customer list merged from two CRMs, with the same people typed in different ways.
set -euo pipefail
python3 - <<'PY'
import csv, random, unicodedata

rng = random.Random(2718)
FIRST = ["Anna", "José", "Chloé", "Lukas", "Mia", "Noah", "Zoë", "Björn", "Inès", "Oliver", "Sofia", "Mateo",
         "Emma", "Liam", "Léa", "Jonas", "Ava", "Elif", "Omar", "Clara"]
LAST = ["Müller", "García", "O'Brien", "Smith", "Nguyen", "Schäfer", "Rossi", "Dubois", "Kowalski", "Jensen",
        "Núñez", "Fischer", "Brown", "Lefèvre", "Costa", "Öztürk", "Novak", "Larsen", "Wagner", "Silva"]
DOMAINS = ["gmail.com", "example.org", "mail.de", "posteo.net", "corp.example.com"]
CODES = ["44", "49", "33", "34", "1"]


def plain(s):
    return "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c))


people = []
names = set()
while len(people) < 110:
    first, last = rng.choice(FIRST), rng.choice(LAST)
    if (first, last) in names and rng.random() < 0.9:
        continue
    names.add((first, last))
    local = plain(f"{first}.{last}").lower().replace("'", "") + (str(rng.randrange(10, 99)) if rng.random() < 0.4 else "")
    people.append({"first": first, "last": last, "email": f"{local}@{rng.choice(DOMAINS)}",
                   "work": f"{plain(first).lower()[0]}{plain(last).lower().replace(chr(39), '')}@acme-{rng.randrange(100)}.com",
                   "cc": rng.choice(CODES), "phone": str(rng.randrange(200000000, 999999999))})
for a, b in [(3, 4), (10, 11), (20, 21)]:  # families sharing a landline
    people[b]["cc"], people[b]["phone"] = people[a]["cc"], people[a]["phone"]


def v_name(p):
    f, l = p["first"], p["last"]
    s = rng.choice([f"{f} {l}", f"{f} {l}", f"{l}, {f}", f"Dr. {f} {l}", f"Mr {f} {l}", f"{f}  {l}",
                    f"{plain(f)} {plain(l)}", f"{f.upper()} {l.upper()}", f"{f.lower()} {l.lower()}"])
    return rng.choice([s, s, f" {s}", f"{s} "])


def v_email(p):
    if rng.random() < 0.2:
        return p["work"]
    local, dom = p["email"].split("@")
    if rng.random() < 0.25:
        local += "+" + rng.choice(["shop", "news", "crm"])
    if dom == "gmail.com" and rng.random() < 0.5:
        local = local.replace(".", "") if rng.random() < 0.5 else local
        dom = rng.choice(["gmail.com", "googlemail.com"])
    e = f"{local}@{dom}"
    return rng.choice([e, e.upper(), e.title(), f" {e}", f"{e} "])


def v_phone(p):
    n = p["phone"]
    return rng.choice([f"+{p['cc']} {n[:3]} {n[3:6]} {n[6:]}", f"00{p['cc']}{n}", f"0{n[:2]}-{n[2:5]}-{n[5:]}",
                       f"({n[:3]}) {n[3:6]}.{n[6:]}", f"0{n}"])


rows = []
for p in people:
    for _ in range(rng.choice([1, 1, 2, 2, 3, 4])):
        email = v_email(p) if rng.random() < 0.8 else ""
        phone = v_phone(p) if rng.random() < 0.7 else rng.choice(["", "", "n/a", "12345"])
        rows.append([v_name(p), email, phone, rng.choice(["London", "Berlin", "Paris", "Madrid", "Boston"])])
rng.shuffle(rows)
ids = rng.sample(range(1000, 9999), len(rows))
with open("customers.csv", "w", newline="", encoding="utf-8") as fh:
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(["id", "name", "email", "phone", "city"])
    w.writerows([i, *r] for i, r in zip(ids, rows))
PY
