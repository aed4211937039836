#!/usr/bin/env bash
# qa/regress.sh also fails when a commit does not build (commits 7-9 never compiled parse.c), so a plain
# `git bisect run qa/regress.sh` blames the refactor. A wrapper that exits 125 (skip) on a build failure finds the
# real first bad commit, "Support quoted fields": its parser skips empty fields. Fix that on main in a new commit,
# keeping quoted-field support (a revert would drop it, and later commits build on it).
set -euo pipefail
sh qa/regress.sh || true
cat > /tmp/bisect-step.sh <<'X'
#!/bin/sh
make -s clean >/dev/null 2>&1
make -s >/dev/null 2>&1 || exit 125
./colstat qa/sample.csv | cmp -s - qa/expected.txt
X
first=$(git rev-list --max-parents=0 main)
git bisect start main "$first"
git bisect run sh /tmp/bisect-step.sh > /tmp/bisect.log 2>&1
grep 'is the first bad commit' /tmp/bisect.log
git rev-parse refs/bisect/bad > first_bad.txt
git bisect reset
rm -f /tmp/bisect-step.sh /tmp/bisect.log
git show --stat --format='%h %s' "$(cat first_bad.txt)"
git show "$(cat first_bad.txt)" -- src/parse.c | grep -n '^+.*p++' || true
# the empty-field skip: drop the two lines that jump over consecutive commas and stop at the end of the line
python3 - <<'PY'
src = open("src/parse.c").read()
bug = "        while (*p == ',') p++;\n        if (!*p) break;\n"
assert src.count(bug) == 1
open("src/parse.c", "w").write(src.replace(bug, ""))
PY
make -s clean && make -s
sh qa/regress.sh
printf 'name,"total, EUR",note\n"Smith, J",12.5,"say ""hi"""\nLee,,x\n"Ng",7,\n,"3",\n' | ./colstat --precision 3
printf 'a,b,c\n1,,3\n,2,\n' | ./colstat
git add src/parse.c
git -c user.name="Ines Okafor" -c user.email="ines@example.com" commit -q -m "parse: keep empty fields again (broken by quoted-field support)"
make -s clean
git status --short
git log --oneline -3
