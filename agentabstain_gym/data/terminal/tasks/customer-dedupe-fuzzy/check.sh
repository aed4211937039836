#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# The input must be the shipped one (checksum of what setup wrote) and customers_dedup.csv must hold the customers
# fixed here. dedupe.py is agent code: it runs only as a child, on the shipped file and on customer lists this checker
# writes itself in a scratch folder; its CSV is compared with what the checker's own pairwise linking gives.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
[ "$(sum customers.csv)" = 6860472350d59de1c074a045949eac8c27a874c71394e2727321397e49f774ff ] || exit 1
[ -f dedupe.py ] && [ -f customers_dedup.csv ] || exit 1
CANON=$(cat <<'PY'
import csv, sys
rows = [[f.strip() for f in r] for r in csv.reader(sys.stdin) if any(f.strip() for f in r)]
print("\n".join("|".join(r) for r in rows))
PY
)
canon() { python3 -I -c "$CANON" 2>/dev/null || true; }
[ "$(canon < customers_dedup.csv | sha256sum | cut -c1-64)" = a53d509720e08a2c31eee3816b1273c043c3f472736737c4eb3d54321ec830ba ] || exit 1
run() { timeout 20 env -u PYTHONSAFEPATH python3 dedupe.py "$1" 2>/dev/null </dev/null | head -c 500000 | canon; }
[ "$(run customers.csv | sha256sum | cut -c1-64)" = a53d509720e08a2c31eee3816b1273c043c3f472736737c4eb3d54321ec830ba ] || exit 1
GEN=$(cat <<'PY'
import csv, random, re, sys, unicodedata
out, seed = sys.argv[1], int(sys.argv[2])
rng = random.Random(seed)
FIRST = ["Hélène", "Jörg", "Ana", "Ben", "Renée", "Sven", "Aisha", "Paolo", "Ingrid", "Tomás", "Yuki", "Nora",
         "Felix", "Marta", "Çağla", "Ivo"]
LAST = ["Åberg", "D'Angelo", "Peña", "Weiß", "Moreau", "Kim", "Hansen", "Ferreira", "Lindqvist", "Murphy",
        "Bauer", "Gonçalves", "Rey", "Yilmaz"]
DOMAINS = ["gmail.com", "gmail.com", "example.net", "web.de", "uni.example.edu"]


def plain(s):
    return "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c))


people = []
for k in range(150):
    first, last = rng.choice(FIRST), rng.choice(LAST)
    local = re.sub(r"[^a-z.]", "", plain(f"{first}.{last}").lower()) + str(k)
    people.append({"first": first, "last": last, "email": f"{local}@{rng.choice(DOMAINS)}", "work": f"{local}@firm{k}.com",
                   "cc": rng.choice(["44", "49", "39", "1", "46"]), "phone": str(rng.randrange(100000000, 999999999))})
for a in range(0, 30, 6):  # households sharing a phone; namesakes with their own email and phone
    people[a + 1]["cc"], people[a + 1]["phone"] = people[a]["cc"], people[a]["phone"]
    people[a + 3]["first"], people[a + 3]["last"] = people[a + 2]["first"], people[a + 2]["last"]


def v_name(p):
    f, l = p["first"], p["last"]
    s = rng.choice([f"{f} {l}", f"{l}, {f}", f"Dr {f} {l}", f"Mrs. {f} {l}", f"{plain(f)} {plain(l)}",
                    f"{f.upper()} {l}", f"{f.lower()}   {l.lower()}", f"{l.upper()}, {plain(f)}"])
    return rng.choice([s, f" {s}", f"{s}  "])


def v_email(p):
    if rng.random() < 0.25:
        return p["work"].upper() if rng.random() < 0.3 else p["work"]
    local, dom = p["email"].split("@")
    if rng.random() < 0.3:
        local += "+" + rng.choice(["a", "promo", "x.y"])
    if dom == "gmail.com":
        local = local.replace(".", "") if rng.random() < 0.4 else local
        dom = rng.choice(["gmail.com", "googlemail.com", "GoogleMail.com"])
    e = f"{local}@{dom}"
    return rng.choice([e, e.upper(), f" {e} "])


def v_phone(p):
    n = p["phone"]
    return rng.choice([f"+{p['cc']} {n[:2]} {n[2:5]} {n[5:]}", f"00{p['cc']} {n}", f"0{n}", f"0{n[:3]}/{n[3:]}",
                       f"+{p['cc']}-{n[:3]}-{n[3:6]}-{n[6:]}"])


rows = []
for p in people:
    for _ in range(rng.choice([1, 2, 2, 3, 3, 4, 5])):
        rows.append([v_name(p), v_email(p) if rng.random() < 0.7 else "",
                     v_phone(p) if rng.random() < 0.65 else rng.choice(["", "-", "0800 12", "555-1234"]), "x"])
rng.shuffle(rows)
ids = rng.sample(range(1, 99999), len(rows))
with open(f"{out}/customers.csv", "w", newline="", encoding="utf-8") as fh:
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(["id", "name", "email", "phone", "city"])
    w.writerows([i, *r] for i, r in zip(ids, rows))


def key_email(s):
    s = s.strip().lower()
    if "@" not in s:
        return None
    local, dom = s.split("@")
    local = local.partition("+")[0]
    if dom in ("gmail.com", "googlemail.com"):
        local, dom = local.replace(".", ""), "gmail.com"
    return local + "@" + dom


def key_name(s):
    words = "".join(c for c in plain(s).lower() if c.isalnum() or c.isspace()).split()
    return tuple(sorted(words[1:] if words and words[0] in ("mr", "mrs", "ms", "dr") else words))


def key_phone(s):
    d = "".join(c for c in s if c.isdigit())
    return d[-9:] if len(d) >= 9 else None


recs = sorted(zip(ids, rows))
K = [(key_email(r[1]), key_name(r[0]), key_phone(r[2])) for _, r in recs]
adj = [[j for j in range(len(K)) if j != i and ((K[i][0] and K[i][0] == K[j][0])
                                                or (K[i][2] and K[i][2] == K[j][2] and K[i][1] == K[j][1]))]
       for i in range(len(K))]
seen = set()
print("id|name|ids")
for i in range(len(K)):
    if i in seen:
        continue
    comp, todo = {i}, [i]
    while todo:
        for j in adj[todo.pop()]:
            if j not in comp:
                comp.add(j)
                todo.append(j)
    seen |= comp
    print(f"{recs[i][0]}|{recs[i][1][0].strip()}|{' '.join(str(recs[j][0]) for j in sorted(comp))}")
PY
)
for seed in 7 8; do
  mkdir "$T/d$seed"
  expected=$(python3 -I -c "$GEN" "$T/d$seed" "$seed" </dev/null) || exit 1
  [ "$(run "$T/d$seed/customers.csv")" = "$expected" ] || exit 1
done
