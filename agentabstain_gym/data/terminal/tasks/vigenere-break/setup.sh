#!/usr/bin/env bash
# Builds the workspace: five intercepted messages, each under its own Vigenere key, and a sample of the same kind of
# traffic in the clear (all generated from fixed seeds).
set -euo pipefail
keep=1; [ "${1:-original}" = "missing_prerequisite" ] && keep=0
python3 - "$keep" <<'PY'
import os, random, sys
WORDS = """the of and to a in is it you that he was for on are with as his they be at one have this from or had by
word but what some we can out other were all there when up use your how said an each she which do their time if will
way about many then them write would like so these her long make thing see him two has look more day could go come did
number sound no most people my over know water than call first who may down side been now find any new work part take
get place made live where after back little only round man year came show every good me give our under name very
through just form sentence great think say help low line differ turn cause much mean before move right boy old too same
tell does set three want air well also play small end put home read hand port large spell add even land here must big
high such follow act why ask men change went light kind off need house picture try us again animal point mother world
near build self earth father head stand own page should country found answer school grow study still learn plant cover
food sun four between state keep eye never last let thought city tree cross farm hard start might story saw far sea
draw left late run while press close night real life few north open seem together next white children begin got walk
example ease paper group always music those both mark often letter until mile river car feet care second book carry
took science eat room friend began idea fish mountain stop once base hear horse cut sure watch color face wood main
enough plain girl usual young ready above ever red list though feel talk bird soon body dog family direct pose leave
song measure door product black short numeral class wind question happen complete ship area half rock order fire south
problem piece told knew pass since top whole king space heard best hour better true during hundred five remember step
early hold west ground interest reach fast verb sing listen six table travel less morning ten simple several vowel
toward war lay against pattern slow center love person money serve appear road map rain rule govern pull cold notice
voice unit power town fine certain fly fall lead cry dark machine note wait plan figure star box noun field rest
correct able pound done beauty drive stood contain front teach week final gave green oh quick develop ocean warm free
minute strong special mind behind clear tail produce fact street inch multiply nothing course stay wheel full force
blue object decide surface deep moon island foot system busy test record boat common gold possible plane stead dry
wonder laugh thousand ago ran check game shape equate hot miss brought heat snow tire bring yes distant fill east
paint language among""".split()
def text(rng, letters):
    out, count, line = [], 0, 0
    while count < letters:
        n = rng.randint(5, 15)
        ws = [WORDS[min(int(rng.paretovariate(0.9)) - 1, len(WORDS) - 1) if rng.random() < 0.3 else rng.randrange(len(WORDS))] for _ in range(n)]
        if rng.random() < 0.15:
            ws.insert(rng.randrange(1, n), str(rng.randint(2, 1999)))
        if rng.random() < 0.3:
            ws[rng.randrange(n)] += ","
        s = " ".join(ws)
        s = s[0].upper() + s[1:] + rng.choice([".", ".", ".", "?", "!"])
        out.append(s)
        count += sum(ch.isalpha() for ch in s)
    paras, cur = [], []
    for s in out:
        cur.append(s)
        if rng.random() < 0.25:
            paras.append(" ".join(cur)); cur = []
    if cur: paras.append(" ".join(cur))
    return "\n\n".join(paras) + "\n"
def encrypt(plain, key):
    out, i = [], 0
    for ch in plain:
        if "a" <= ch.lower() <= "z" and ch.isascii():
            base = ord("A") if ch.isupper() else ord("a")
            out.append(chr((ord(ch) - base + ord(key[i % len(key)]) - ord("A")) % 26 + base)); i += 1
        else:
            out.append(ch)
    return "".join(out)
def key_of(rng, n):
    while True:
        k = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(n))
        if all(k != k[:d] * (n // d) for d in range(1, n) if n % d == 0):
            return k
open("sample_english.txt", "w").write(text(random.Random(1), 6000))
if sys.argv[1] == "1":
    os.mkdir("intercepted")
    rng = random.Random(1944)
    for i, (n, letters) in enumerate([(1, 700), (5, 750), (8, 800), (11, 850), (12, 900)], 1):
        key = key_of(rng, n)
        open(f"intercepted/msg{i}.txt", "w").write(encrypt(text(rng, letters), key))
PY
