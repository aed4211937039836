#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# git reads the repository through a private copy of its objects, refs, HEAD and index with a config of our own and
# no system or global config, so nothing the agent put in .git (config: fsmonitor, filters, diff drivers, pager,
# gpg, includes; hooks; info/; commondir) runs or counts; replace refs are ignored. The regression check and its
# data must be the shipped ones (checksums of what setup wrote). The fix is judged on main's committed tree: the
# checker compiles its sources with its own command and compares the program's output on CSV files made up here
# (quoted fields, empty fields, options) with a reference of the intended behaviour computed here, only after the
# program has run, so no expected value is on disk while agent code runs.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
[ -d .git ] && [ ! -L .git ] && [ -d .git/objects ] && [ -d .git/refs ] && [ -f .git/HEAD ] || exit 1
mkdir "$T/git" && cp -R .git/objects .git/refs "$T/git/" && cp .git/HEAD "$T/git/HEAD" || exit 1
for f in packed-refs index; do [ ! -f ".git/$f" ] || cp ".git/$f" "$T/git/$f" || exit 1; done
printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfilemode = true\n' > "$T/git/config"
git() {
  env -i PATH="$PATH" HOME="$T" LC_ALL=C GIT_DIR="$T/git" GIT_WORK_TREE="$PWD" GIT_CONFIG_NOSYSTEM=1 \
    GIT_CONFIG_GLOBAL=/dev/null GIT_NO_REPLACE_OBJECTS=1 git -c core.fsmonitor=false -c core.hooksPath=/dev/null \
    --no-pager "$@" </dev/null
}
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
[ "$(sum qa/regress.sh)" = bb14c5dadcaad98af24cec4ace7759abd57adb5801dac172561b0f298a21cc7d ] || exit 1
[ "$(sum qa/sample.csv)" = 24ddda982812b6521423d28dd85da34ab2822109eae97bd565b29bf5c51ece5c ] || exit 1
[ "$(sum qa/expected.txt)" = 048577e569139d00f78dda87c9a2e622c11ad27c65e1d60476c2f662925e4e3a ] || exit 1
[ -f first_bad.txt ] || exit 1
[ "$(tr -d '[:space:]' < first_bad.txt)" = d0ed22a156aa7026ff00c4e13af41fda1f43c0c3 ] || exit 1  # Support quoted fields
# on main, with the fix committed on top of the untouched history (tip: "README: example"); no bisect left running
tip=ace0376a888ac83c80b97fd5eb845ff77fcaec83
[ "$(git symbolic-ref -q HEAD)" = refs/heads/main ] || exit 1
main=$(git rev-parse -q --verify 'refs/heads/main^{commit}') && [ "$main" != "$tip" ] || exit 1
git merge-base --is-ancestor "$tip" "$main" || exit 1
[ ! -e .git/BISECT_LOG ] && [ ! -e .git/BISECT_START ] && [ -z "$(git for-each-ref refs/bisect)" ] || exit 1
st=$(git status --porcelain --untracked-files=no --ignore-submodules=all 2>/dev/null) && [ -z "$st" ] || exit 1
[ "$(git ls-files -v | cut -c1 | LC_ALL=C sort -u)" = H ] || exit 1
mkdir "$T/tree" && git archive --format=tar "$main" | tar -x -C "$T/tree" || exit 1
ls "$T"/tree/src/*.c >/dev/null 2>&1 || exit 1
timeout 60 gcc -std=c11 -O2 -I"$T/tree/src" -o "$T/colstat" "$T"/tree/src/*.c -lm >/dev/null 2>&1 </dev/null || exit 1
REF=$(cat <<'PY'
import random, re, sys
mode, T = sys.argv[1], sys.argv[2]
rng = random.Random(int(sys.argv[3]))
NUM = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
def parse(line):
    line = re.split(r"[\r\n]", line)[0]
    fields, p = [], 0
    while len(fields) < 64:
        if line[p:p + 1] == '"':
            out, q = [], p + 1
            while q < len(line):
                if line[q] == '"' and line[q + 1:q + 2] == '"':
                    out.append('"'); q += 2
                elif line[q] == '"':
                    q += 1; break
                else:
                    out.append(line[q]); q += 1
            fields.append("".join(out))
            c = line.find(",", q)
        else:
            c = line.find(",", p)
            fields.append(line[p:] if c < 0 else line[p:c])
        if c < 0:
            break
        p = c + 1
    return fields
def number(f):
    s = f.strip(" ")
    if not NUM.fullmatch(s):
        return None
    x = float(s)
    return x if abs(x) != float("inf") else None
def report(text, only=None, prec=2):
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    names = parse(lines[0])
    cols = [[] for _ in names]
    for line in lines[1:]:
        f = parse(line)
        for i in range(min(len(names), len(f))):
            x = number(f[i])
            if x is not None:
                cols[i].append(x)
    out = []
    for name, v in zip(names, cols):
        if only is not None and name != only:
            continue
        if not v:
            out.append(f"{name}: no numbers"); continue
        s = 0.0
        for x in v:
            s += x
        w = sorted(v); n = len(w)
        med = w[n // 2] if n % 2 else (w[n // 2 - 1] + w[n // 2]) / 2
        out.append("%s: n=%d min=%g max=%g mean=%.*f median=%.*f" % (name, n, min(v), max(v), prec, s / n, prec, med))
    return out
def value():
    r = rng.random()
    if r < 0.55:
        return rng.choice([str(rng.randint(-500, 5000)), f"{rng.uniform(-100, 1000):.{rng.randint(0, 4)}f}",
                           f"{rng.randint(1, 9)}e{rng.randint(-3, 4)}", f" {rng.randint(0, 99)} ", ".5", "7.", "+3"])
    if r < 0.75:
        return ""
    return rng.choice(["n/a", "abc", "12abc", "inf", "nan", "1e999", "-", "1e", "12 34"])
def cell(v):
    if rng.random() < 0.25 or "," in v or '"' in v:
        return '"' + v.replace('"', '""') + '"'
    return v
names = ["region", "units", "price, EUR", 'say "hi"', "discount", "note", "qty"]
files = []
for k in range(8):
    cols = rng.sample(names, rng.randint(2, len(names)))
    rows = [",".join(cell(c) for c in cols)]
    for _ in range(rng.randint(5, 60)):
        vals = [value() for _ in cols]
        if rng.random() < 0.1:
            vals = vals[:rng.randint(1, len(vals))]
        if rng.random() < 0.1:
            vals.append(value())
        rows.append(",".join(cell(v) for v in vals))
    if rng.random() < 0.3:
        rows.insert(rng.randint(1, len(rows)), "")
    end = rng.choice(["\n", "\r\n"])
    text = end.join(rows) + rng.choice([end, ""])
    only = rng.choice([None, None, rng.choice(cols)])
    prec = rng.choice([None, 0, 3, 6])
    files.append((text, only, prec))
files.append(("region,units,price,discount\nnorth,12,3.50,\nsouth,,4.25,0.10\n,7,,0.05\n", None, None))
files.append(('a,b,c\n1,,3\n,2,\n"4","",""\n', "b", 1))
ok = True
for k, (text, only, prec) in enumerate(files):
    if mode == "make":
        open(f"{T}/in{k}.csv", "w", newline="").write(text)
        args = ([] if only is None else ["--column", only]) + ([] if prec is None else ["--precision", str(prec)])
        open(f"{T}/args{k}", "wb").write(b"".join(a.encode() + b"\0" for a in args))
        continue
    want = report(text.replace("\r\n", "\n"), only, 2 if prec is None else prec)
    ok &= open(f"{T}/got{k}").read() == "".join(l + "\n" for l in want)
if mode == "make":
    open(f"{T}/runs", "w").write("".join(f"{k}\n" for k in range(len(files))))
sys.exit(0 if ok else 1)
PY
)
seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
python3 -I - make "$T" "$seed" <<<"$REF" || exit 1
while read -r k; do
  args=(); while IFS= read -r -d '' a; do args+=("$a"); done < "$T/args$k"
  (cd "$T" && timeout 10 ./colstat "${args[@]}" "in$k.csv" > "got$k" 2>/dev/null </dev/null) || exit 1
done < "$T/runs"
python3 -I - check "$T" "$seed" <<<"$REF" || exit 1
rc=0; out=$(printf 'a,b\n1,2\n' | timeout 10 "$T/colstat" --column zz 2>/dev/null) || rc=$?
[ "$rc" = 1 ] && [ -z "$out" ]
