#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# The batch must be the shipped one (checksum of what setup wrote; its 9th puzzle has no solution). solutions.txt is
# checked against the rules by the checker's own isolated Python. sudoku is agent code: it runs as a child, under a
# time limit, on a new batch the checker makes in a scratch folder (new symmetries and digit labels of hard puzzles,
# one without a solution, a box-only clash, malformed lines), and its answers are checked the same way, against
# that batch made again from the seed after it has run.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
cp puzzles.txt "$T/ws.txt" 2>/dev/null || exit 1
[ "$(sum "$T/ws.txt")" = b4db383033c579c4093b3642c9f7791e11ca7993accd0c44b7fa384cec8bb956 ] || exit 1
[ -f solutions.txt ] && [ -f sudoku ] && [ -x sudoku ] || exit 1
cp solutions.txt "$T/ws-answers.txt"
PY=$(cat <<'EOF'
import json, random, sys
ABF = ("..............3.85..1.2.......5.7.....4...1...9.......5......73..2.1........4...9",
       "987654321246173985351928746128537694634892157795461832519286473472319568863745219")
BASE = [
    (".7..6..9...5...1..6.9..4....23...9....4..13......52..4..25..........8......41.5.3",
     "371265498245789136689134257123847965854691372967352814412573689536928741798416523"),
    ("8.......3.....8.7.....4.12.21.7...8...6..5........6..44..6......23.....175..1.4..",
     "892571643134268579567349128215734986346985217978126354481692735623457891759813462"),
    (".4..5..8...3........8.2.34..71..3.544.......6.9...7.......3.8.....895..1.....1.7.",
     "947356182123478569568129347271683954485912736396547218612734895734895621859261473"),
    (".1..4.9....468...7..9...23.........5.....2.1..4571.........18...2.9.....7..3.....",
     "517243968234689157689157234162834795873592416945716382356471829421968573798325641"),
    ("...........51...78.....812.1..7.39......9..1.9...6.4.7........2...3...6..6..2435.",
     "381672549245139678679458123126743985734895216958261437413586792592317864867924351"),
    ("1..867....5...........4..26.......8.8.7.....3...9..25......67...2..913....4...8..",
     "142867539356129478789345126215673984897254613463918257531486792628791345974532861"),
]
def transform(rng, p, s):
    bands = rng.sample(range(3), 3); stacks = rng.sample(range(3), 3)
    rows = [b * 3 + r for b in bands for r in rng.sample(range(3), 3)]
    cols = [t * 3 + c for t in stacks for c in rng.sample(range(3), 3)]
    tr = rng.random() < 0.5
    at = lambda g, r, c: g[(cols[c] * 9 + rows[r]) if tr else (rows[r] * 9 + cols[c])]
    P = [at(p, r, c) for r in range(9) for c in range(9)]
    S = [at(s, r, c) for r in range(9) for c in range(9)]
    m = {int(S[c]): 9 - c for c in range(9)}
    return "".join(str(m[int(v)]) if v != "." else "." for v in P), "".join(str(m[int(v)]) for v in S)
def units():
    us = [[r * 9 + c for c in range(9)] for r in range(9)] + [[r * 9 + c for r in range(9)] for c in range(9)]
    us += [[(br + dr) * 9 + bc + dc for dr in range(3) for dc in range(3)] for br in (0, 3, 6) for bc in (0, 3, 6)]
    return us
def wrong_given(rng, p, s):
    holes = [i for i, ch in enumerate(p) if ch == "."]
    rng.shuffle(holes)
    for i in holes:
        for v in rng.sample("123456789", 9):
            if v == s[i]: continue
            q = p[:i] + v + p[i + 1:]
            if all(len([q[k] for k in u if q[k] != "."]) == len({q[k] for k in u if q[k] != "."}) for u in units()):
                return q
def puzzle_lines(text):
    return [l.strip() for l in text.split("\n") if l.strip() and not l.strip().startswith("#")]
def verdict(puzzles, answer, unsolvable):
    ans = [l.strip() for l in answer.split("\n") if l.strip()]
    if len(ans) != len(puzzles): return "count"
    for k, (p, a) in enumerate(zip(puzzles, ans)):
        ok_form = len(p) == 81 and all(ch in "123456789.0" for ch in p)
        givens = [ch if ch in "123456789" else "." for ch in p] if ok_form else []
        conflict = ok_form and any(len([givens[i] for i in u if givens[i] != "."]) != len({givens[i] for i in u if givens[i] != "."}) for u in units())
        if not ok_form or conflict:
            if a != "invalid": return f"{k} invalid"
        elif k in unsolvable:
            if a != "no solution": return f"{k} no solution"
        else:
            if len(a) != 81 or any(ch not in "123456789" for ch in a): return f"{k} form"
            if any(sorted(a[i] for i in u) != list("123456789") for u in units()): return f"{k} rules"
            if any(g != "." and g != a[i] for i, g in enumerate(givens)): return f"{k} givens"
    return "all correct"
def batch():
    rng = random.Random(60221)
    lines = ["# puzzles from the weekly batch", transform(rng, *ABF)[0]]
    for p, s in BASE:
        lines.append(transform(rng, p, s)[0])
    lines.append(transform(rng, *ABF)[0].replace(".", "0"))
    p, s = transform(rng, *BASE[2]); lines.append(wrong_given(rng, p, s))
    box = ["."] * 81
    box[0], box[10], box[40], box[80] = "7", "7", "5", "3"  # two 7s in one box, in different rows and columns
    lines.append("".join(box))
    lines.append("")
    lines.append("." * 81)
    lines.append(transform(rng, *BASE[0])[0][:80])
    lines.append(transform(rng, *BASE[1])[0][:40] + "x" + transform(rng, *BASE[1])[0][41:])
    return "\n".join(lines) + "\n"
if sys.argv[1] == "gen":
    open(sys.argv[2], "w").write(batch())
elif sys.argv[1] == "new":  # the answers on stdin, judged against the batch made again from the seed
    print(verdict(puzzle_lines(batch()), sys.stdin.read(), {8}))
else:
    print(verdict(puzzle_lines(open(sys.argv[2]).read()), open(sys.argv[3]).read(), set(json.loads(sys.argv[4]))))
EOF
)
py() { timeout 10 python3 -I -c "$PY" "$@" 2>/dev/null </dev/null; }
[ "$(py verify "$T/ws.txt" "$T/ws-answers.txt" '[8]')" = "all correct" ] || exit 1
py gen "$T/new.txt" && [ -s "$T/new.txt" ] || exit 1
out=$(timeout 12 ./sudoku "$T/new.txt" 2>/dev/null </dev/null) || exit 1
[ "$(printf '%s' "$out" | timeout 10 python3 -I -c "$PY" new 2>/dev/null)" = "all correct" ]
