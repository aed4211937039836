#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# The messages and the sample must be the shipped ones (checksums of what setup wrote); keys.txt is compared with the
# keys fixed here. break_vigenere is agent code: it runs as a child (in the workspace, where the sample is) on six new
# messages the checker's own isolated Python enciphers in a scratch folder, and its output must be exactly the key
# and the plaintext, which are made again from the seed only after it has run (never on disk while it runs).
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
[ "$(sum sample_english.txt)" = ef8b9bb7fec4061e8704945e9bb267e2765eafdce590f60541506ff9c3aa0ecd ] || exit 1
[ "$(sum intercepted/msg1.txt)" = b5a04c2bd0097a4c9d980964fe20b6035093c6a10ca69796b014ec6fbeb4573c ] || exit 1
[ "$(sum intercepted/msg2.txt)" = 0a2e29db84165f8b51d1cad7275b62e0bcf7ec9591af5cfe975117734f9f2327 ] || exit 1
[ "$(sum intercepted/msg3.txt)" = 0957eca6e3853b0424f769009890db7d0f1a29d3c18965d3b13d6af2c6c0f33d ] || exit 1
[ "$(sum intercepted/msg4.txt)" = f0d0560c5b3c6f0a602dc2e26340bc68176fca4924ccf61780f72b82896e18be ] || exit 1
[ "$(sum intercepted/msg5.txt)" = abd5c73985a4bb7e03d3a3fde7cd017f51c072119448562a21426bf7b3ddb8e3 ] || exit 1
[ -f keys.txt ] && [ -f break_vigenere ] && [ -x break_vigenere ] || exit 1
[ "$(sed -e 's/[[:space:]]*$//' -e '/^$/d' keys.txt | tr -s ' \t' ' ' | LC_ALL=C sort)" = 'msg1 B
msg2 ECLOQ
msg3 LDXGWZBP
msg4 VRNCIRZFTUF
msg5 JENBFCNXGJRF' ] || exit 1
PY=$(cat <<'EOF'
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
import os, random, sys
def instances():
    rng = random.Random(2718)
    for i, (n, letters) in enumerate([(3, 700), (6, 720), (10, 760), (7, 700), (2, 650), (12, 820)]):
        key = key_of(rng, n)
        plain = text(rng, letters)
        if i == 3:
            plain = plain.replace(" the ", " 'the' ", 3).replace(".", ". --", 2)
        yield i, key, plain
if sys.argv[1] == "gen":
    for i, key, plain in instances():
        open(os.path.join(sys.argv[2], f"c{i}.txt"), "w").write(encrypt(plain, key))
else:  # the agent's output on stdin; the expected key and plaintext are made again from the seed, only now
    want = {i: key + "\n" + plain for i, key, plain in instances()}[int(sys.argv[2])]
    got = sys.stdin.buffer.read().decode("utf-8", "replace").rstrip("\n")
    print("same" if got == want.rstrip("\n") else "different")
EOF
)
timeout 10 python3 -I -c "$PY" gen "$T" </dev/null >/dev/null 2>&1 || exit 1
for i in 0 1 2 3 4 5; do
  [ -s "$T/c$i.txt" ] || exit 1
  out=$(timeout 10 ./break_vigenere "$T/c$i.txt" 2>/dev/null </dev/null) || exit 1
  [ "$(printf '%s' "$out" | timeout 10 python3 -I -c "$PY" cmp "$i" 2>/dev/null)" = same ] || exit 1
done
