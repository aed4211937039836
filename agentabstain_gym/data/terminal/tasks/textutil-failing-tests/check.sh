#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# The tests and the header must be the shipped ones (checksums of what setup wrote); the provided tests are not
# run. src/textutil.c is agent code: it is compiled by the checker (its own command, in a scratch folder with only
# the shipped header), may define nothing but the library's functions, and is linked into the checker's own driver,
# whose malloc fences every block: each case below, made up here on every run, must print what a reference of the
# header's contract computed here prints, and must write nothing outside the blocks it allocates. The reference runs
# only after the driver has, so no expected value is on disk while agent code runs.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
[ "$(sum tests/test_textutil.c)" = b6268acc8ee16d4bd58cb03cc22c339176fe0d2747d639ca090a2ee1c3f11b13 ] || exit 1
[ "$(sum include/textutil.h)" = 678c3efa2b9076ce1c49b23d7471977d302a6499b822b125d9d1fffa28e4661c ] || exit 1
[ -f src/textutil.c ] && [ ! -L src/textutil.c ] || exit 1
mkdir "$T/inc" && cp include/textutil.h "$T/inc/" && cp src/textutil.c "$T/textutil.c" || exit 1
cat > "$T/driver.c" <<'C'
/* The checker's driver for libtextutil: every heap block is fenced, and each case reports writes outside them. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "textutil.h"

#define ARENA (96u << 20)
#define FENCE 32
#define BLOCKS (1u << 20)
static unsigned char arena[ARENA] __attribute__((aligned(4096)));
static size_t top, heads[BLOCKS], sizes[BLOCKS], nblocks, mark;

static void *fenced(size_t n, size_t align) {
    if (align < 16) align = 16;
    size_t head = (top + FENCE + align - 1) / align * align;
    if (n > ARENA || head + n + FENCE > ARENA || nblocks == BLOCKS) { errno = ENOMEM; return NULL; }
    memset(arena + head - FENCE, 0xA5, FENCE);
    memset(arena + head + n, 0xA5, FENCE);
    heads[nblocks] = head;
    sizes[nblocks++] = n;
    top = head + n + FENCE;
    return arena + head;
}
static size_t size_of(void *p) {
    size_t head = (unsigned char *)p - arena;
    for (size_t i = nblocks; i-- > 0;) if (heads[i] == head) return sizes[i];
    abort();
}
static int owned(void *p) { return (unsigned char *)p >= arena && (unsigned char *)p < arena + ARENA; }
static int scan(void) {  /* a write before or after any block allocated since the case started */
    for (size_t i = mark; i < nblocks; i++)
        for (size_t k = 0; k < FENCE; k++)
            if (arena[heads[i] - FENCE + k] != 0xA5 || arena[heads[i] + sizes[i] + k] != 0xA5) return 1;
    return 0;
}
void *malloc(size_t n) { return fenced(n, 16); }
void *calloc(size_t a, size_t b) {
    if (b && a > SIZE_MAX / b) { errno = ENOMEM; return NULL; }
    void *p = fenced(a * b, 16);
    if (p) memset(p, 0, a * b);
    return p;
}
void free(void *p) { if (p && !owned(p)) abort(); }
void *realloc(void *p, size_t n) {
    void *q = fenced(n, 16);
    if (q && p) { size_t m = size_of(p); memcpy(q, p, m < n ? m : n); }
    return q;
}
void *reallocarray(void *p, size_t a, size_t b) { return b && a > SIZE_MAX / b ? NULL : realloc(p, a * b); }
int posix_memalign(void **out, size_t align, size_t n) { void *p = fenced(n, align); if (!p) return ENOMEM; *out = p; return 0; }
void *aligned_alloc(size_t align, size_t n) { return fenced(n, align); }
void *memalign(size_t align, size_t n) { return fenced(n, align); }
void *valloc(size_t n) { return fenced(n, 4096); }
void *pvalloc(size_t n) { return fenced((n + 4095) & ~(size_t)4095, 4096); }
size_t malloc_usable_size(void *p) { return p ? size_of(p) : 0; }

static char *unhex(const char *h) {
    size_t n = strcmp(h, "-") == 0 ? 0 : strlen(h) / 2;
    char *s = malloc(n + 1);
    for (size_t i = 0; i < n; i++) { unsigned v; sscanf(h + 2 * i, "%2x", &v); s[i] = (char)v; }
    s[n] = '\0';
    return s;
}
static void put(const char *s) {
    if (!s) { fputs(" NULL", stdout); return; }
    fputc(' ', stdout);
    if (!*s) fputc('-', stdout);
    for (; *s; s++) printf("%02x", (unsigned char)*s);
}

int main(void) {
    static char line[1 << 16];
    char *tok[200];
    setvbuf(stdout, NULL, _IOFBF, 1 << 16);
    while (fgets(line, sizeof line, stdin)) {
        int n = 0;
        for (char *t = strtok(line, " \n"); t && n < 200; t = strtok(NULL, " \n")) tok[n++] = t;
        if (n == 0) continue;
        fflush(stdout);
        mark = nblocks;
        char *a = n > 1 ? unhex(tok[1]) : NULL;
        printf("%s", tok[0]);
        if (!strcmp(tok[0], "trim")) {
            char *r = tu_trim(a); put(r); free(r);
        } else if (!strcmp(tok[0], "split")) {
            char *sep = unhex(tok[2]), **f = NULL;
            size_t k = tu_split(a, sep[0], &f);
            printf(" %zu", k);
            for (size_t i = 0; i < k; i++) put(f[i]);
            tu_free_fields(f, k);
        } else if (!strcmp(tok[0], "join")) {
            char *parts[200];
            for (int i = 2; i < n; i++) parts[i - 2] = unhex(tok[i]);
            char *r = tu_join(parts, n - 2, a); put(r); free(r);
        } else if (!strcmp(tok[0], "replace")) {
            char *from = unhex(tok[2]), *to = unhex(tok[3]);
            char *r = tu_replace(a, from, to); put(r); free(r);
        } else if (!strcmp(tok[0], "basename")) {
            size_t cap = strtoul(tok[2], NULL, 10);
            char *out = malloc(cap);
            if (cap) memset(out, 'Z', cap);
            size_t r = tu_basename(a, out, cap);
            printf(" %zu", r);
            if (cap) put(memchr(out, '\0', cap) ? out : "UNTERMINATED");
        }
        printf(scan() ? " CORRUPT\n" : "\n");
    }
    return 0;
}
C
cd "$T"
timeout 60 gcc -std=c11 -O1 -I"$T/inc" -c -o textutil.o textutil.c >/dev/null 2>&1 </dev/null || exit 1
defined=$(nm -g --defined-only textutil.o | awk '{print $3}' | sort | xargs)
for s in $defined; do
  case " tu_trim tu_split tu_free_fields tu_join tu_replace tu_basename " in *" $s "*) ;; *) exit 1;; esac
done
timeout 60 gcc -std=c11 -O1 -I"$T/inc" -o driver driver.c textutil.o >/dev/null 2>&1 </dev/null || exit 1
REF=$(cat <<'PY'
import random, sys
mode, T = sys.argv[1], sys.argv[2]
rng = random.Random(int(sys.argv[3]))
WS = b" \t\n\v\f\r"
def h(b):
    return b.hex() if b else "-"
def text(alpha, lo=0, hi=40):
    return bytes(rng.choice(alpha) for _ in range(rng.randint(lo, hi)))
cases, want = [], []
fixed_trim = [b"", b" ", b"\t\r\n", b"x", b" x", b"x ", b"\vx\f", b"a b", b"\x85x\xa0", b"  hello world  ", b"\tvalue\r\n"]
for s in fixed_trim + [text(b"ab \t\n\r\v\f\xa0,") for _ in range(300)]:
    cases.append(f"trim {h(s)}"); want.append(f"trim {h(s.strip(WS))}")
fixed_split = [(b"", b","), (b",", b","), (b"a,,b,", b","), (b",,", b","), (b"k=v", b"="), (b"abc", b";")]
for s, sep in fixed_split + [(text(b"ab,;/ "), bytes([rng.choice(b",;/ a")])) for _ in range(300)]:
    f = s.split(sep)
    cases.append(f"split {h(s)} {h(sep)}"); want.append(f"split {len(f)} " + " ".join(h(x) for x in f))
fixed_join = [(b",", []), (b"", []), (b"", [b""]), (b", ", [b"usr"]), (b"/", [b"usr", b"local", b"bin"]), (b"--", [b"", b""])]
for sep, parts in fixed_join + [(text(b"-, /", 0, 3), [text(b"abc ", 0, 12) for _ in range(rng.randint(0, 9))])
                                for _ in range(250)]:
    cases.append(f"join {h(sep)} " + " ".join(h(p) for p in parts)); want.append(f"join {h(sep.join(parts))}")
fixed_repl = [(b"aaaa", b"aa", b"b"), (b"aaab", b"aa", b"x"), (b"aaaa", b"aa", b""), (b"abc", b"", b"z"), (b"", b"a", b"bb"),
              (b"aaa", b"a", b"aaa"), (b"xxabxx", b"x", b""), (b"a-b-c", b"-", b" - "), (b"abab", b"aba", b"c")]
for s, fr, to in fixed_repl + [(text(b"aab", 0, 60), text(b"ab", 0, 3), text(b"abc", 0, 5)) for _ in range(500)]:
    cases.append(f"replace {h(s)} {h(fr)} {h(to)}"); want.append(f"replace {h(s.replace(fr, to) if fr else s)}")
def base(p):
    if not p:
        return b""
    q = p.rstrip(b"/")
    return b"/" if not q else q[q.rfind(b"/") + 1:]
fixed_base = [(b"/", 8), (b"///", 2), (b"", 4), (b"a", 1), (b"a", 2), (b"/usr/lib/libc.so", 8), (b"src/include/", 8),
              (b"docs/changelog.md", 8), (b"abc", 3), (b"abc", 4), (b"abc", 0), (b"/", 1), (b"/", 0)]
for p, cap in fixed_base + [(text(b"ab/.", 0, 20), rng.randint(0, 12)) for _ in range(400)]:
    b = base(p)
    cases.append(f"basename {h(p)} {cap}")
    want.append(f"basename {len(b)}" + (f" {h(b[:cap - 1])}" if cap else ""))
order = list(range(len(cases)))
rng.shuffle(order)
if mode == "make":
    open(f"{T}/cases", "w").write("".join(cases[i] + "\n" for i in order))
    sys.exit(0)
sys.exit(0 if open(f"{T}/got").read() == "".join(want[i] + "\n" for i in order) else 1)
PY
)
seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
python3 -I - make "$T" "$seed" <<<"$REF" || exit 1
timeout 20 ./driver < cases > got 2>/dev/null || exit 1
python3 -I - check "$T" "$seed" <<<"$REF"
