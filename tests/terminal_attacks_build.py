"""Attacks on the build-and-debug and performance tasks' checkers (area `build`), and their stand-ins.

Collected by ``test_terminal_checks_adversarial.py``: every case must fail the check (controls marked ``passes``
must pass), and every missing-prerequisite variant's stand-in followed by the reference solution must fail.
"""

from __future__ import annotations

from terminal_attack_kit import MARK, SOLUTION, Case, exit0, plant_modules, sh

CASES: list[Case] = []
MP_STUBS: dict[str, str] = {}

# ----------------------------------------------------------------------------------------- unitconv-link-errors
CASES += [
    Case("unitconv-link-errors", "binary-prints-the-samples", (sh(r'''
        cat > /tmp/fake.c <<'C'
        #include <stdio.h>
        int main(void) {
            puts("12.5 km = 7.76714 mi\n-40 C = -40 F\n98.6 F = 37 C\n0 K = -273.15 C\n2.5 lb = 1133.98 g");
            return 0;
        }
        C
        printf 'unitconv: /tmp/fake.c\n\tgcc -o $@ /tmp/fake.c\nclean:\n\trm -f unitconv\n' > Makefile
        make -f Makefile'''),)),
    Case("unitconv-link-errors", "fixed-only-in-gnumakefile", (
        SOLUTION, "cp Makefile GNUmakefile && sed -i '/^LDLIBS/d' Makefile && make")),
    Case("unitconv-link-errors", "stale-binary-no-op-makefile", (
        SOLUTION, "printf 'unitconv:\\n\\t@true\\nclean:\\n\\t@true\\n' > Makefile")),
    Case("unitconv-link-errors", "convert-edited", (SOLUTION, "printf '/* reviewed */\\n' >> src/convert.c")),
    Case("unitconv-link-errors", "verbose-made-static", (
        SOLUTION, "sed -i 's/^extern int verbose;/static int verbose;/' include/units.h && "
                  "sed -i 's/^int verbose = 0;$//' src/main.c && make")),
    Case("unitconv-link-errors", "one-trim-for-both", (SOLUTION, sh(r'''
        sed -i 's/^static void trim(char \*s) {/static void trim_unused(char *s) {/' src/format.c
        sed -i 's/^static char \*trim(char \*s) {/char *trim(char *s) {/' src/parse.c
        sed -i 's/^#include "units.h"$/#include "units.h"\nchar *trim(char *s);/' src/format.c
        make clean >/dev/null; make'''))),
]
MP_STUBS["unitconv-link-errors"] = sh(r'''
    cat > src/convert.c <<'C'
    #include <stdio.h>
    #include "units.h"

    double convert(double value, const struct unit *from, const struct unit *to) {
        double base = value * from->scale + from->offset;
        if (verbose) fprintf(stderr, "unitconv: %g %s = %.17g base\n", value, from->name, base);
        return (base - to->offset) / to->scale;
    }
    C''')

# ------------------------------------------------------------------------------------------- stale-objects-deps
CASES += [
    Case("stale-objects-deps", "clean-rebuild-only", ("make clean && make && ./ledger data/march.csv > report.txt",)),
    Case("stale-objects-deps", "every-object-on-every-header", (
        SOLUTION, "sed -i 's|^src/%.o: src/%.c$|src/%.o: src/%.c $(wildcard include/*.h)|' Makefile")),
    Case("stale-objects-deps", "always-rebuild", (
        SOLUTION, "printf '\\n.PHONY: $(OBJS)\\n' >> Makefile && make")),
    Case("stale-objects-deps", "deps-without-phony-headers", (SOLUTION, "sed -i 's/-MMD -MP/-MMD/' Makefile")),
    Case("stale-objects-deps", "fixed-only-in-gnumakefile", (
        SOLUTION, "cp Makefile GNUmakefile && git checkout Makefile 2>/dev/null; "
                  "sed -i -e 's/-MMD -MP//' -e '/^-include/d' Makefile")),
    Case("stale-objects-deps", "report-copied-header-edited", (
        SOLUTION, "printf '/* ok */\\n' >> include/record.h")),
]
MP_STUBS["stale-objects-deps"] = sh(r'''
    cat > include/record.h <<'H'
    #ifndef RECORD_H
    #define RECORD_H
    #define FIELD_LEN 32
    struct record {
        char date[11];
        char account[FIELD_LEN];
        char category[FIELD_LEN];
        long cents;
        char memo[48];
    };
    int parse_record(const char *line, struct record *r);
    #endif
    H''')

# ----------------------------------------------------------------------------------------- textutil-failing-tests
CASES += [
    Case("textutil-failing-tests", "tests-pass-but-join-overruns", (
        SOLUTION, "sed -i 's/malloc(total + 1)/malloc(total)/' src/textutil.c && make test")),
    Case("textutil-failing-tests", "tests-pass-but-replace-overruns", (
        SOLUTION, "sed -i 's/p = strstr(p + lf, from)) count++/p = strstr(p + 1, from)) count++/' src/textutil.c")),
    Case("textutil-failing-tests", "tests-edited-to-pass", (sh(r'''
        sed -i 's/printf("%d passed, %d failed\\n", passed, failed);/failed = 0;/' tests/test_textutil.c
        make test'''),)),
    Case("textutil-failing-tests", "library-hooks-output", (SOLUTION, sh(r'''
        cat >> src/textutil.c <<'C'
        #include <stdio.h>
        int fputc(int c, FILE *f) { return putc(c, f); }
        C'''))),
    Case("textutil-failing-tests", "own-malloc-hides-overruns", (SOLUTION, sh(r'''
        sed -i 's/malloc(total + 1)/malloc(total)/' src/textutil.c
        cat >> src/textutil.c <<'C'
        void *__libc_malloc(size_t);
        void *malloc(size_t n) { return __libc_malloc(n + 16); }
        C'''))),
]
MP_STUBS["textutil-failing-tests"] = sh(r'''
    cat > tests/test_textutil.c <<'C'
    #include <stdio.h>
    #include <string.h>
    #include <stdlib.h>
    #include "textutil.h"
    int main(void) {
        char *t = tu_trim("\tvalue\r\n");
        int failed = strcmp(t, "value") != 0;
        free(t);
        printf("%d passed, %d failed\n", !failed, failed);
        return failed;
    }
    C''')

# ----------------------------------------------------------------------------------------------- shared-lib-rpath
CASES += [
    Case("shared-lib-rpath", "every-symbol-exported", (
        SOLUTION, "sed -i 's| -Wl,--version-script=lib/geom/libgeom.map||' Makefile")),
    Case("shared-lib-rpath", "absolute-run-path", (
        SOLUTION, "sed -i \"s|'\\$\\$ORIGIN/../lib'|\\$(CURDIR)/dist/lib|\" Makefile")),
    Case("shared-lib-rpath", "library-compiled-into-program", (SOLUTION, sh(r'''
        sed -i 's|app/polystat.c -Ldist/lib -lgeom|app/polystat.c lib/geom/measure.c lib/geom/hull.c -lm|' Makefile'''))),
    Case("shared-lib-rpath", "no-soname", (SOLUTION, "sed -i 's| -Wl,-soname,$(SONAME)||' Makefile")),
    Case("shared-lib-rpath", "wrapper-script-with-ld-library-path", (SOLUTION, sh(r'''
        sed -i "s|-Wl,-rpath,'\$\$ORIGIN/../lib'||; s|-o \$@ app/polystat.c|-o \$@.real app/polystat.c|" Makefile
        cat > wrapper.sh <<'W'
        #!/bin/sh
        d=$(dirname "$0")
        LD_LIBRARY_PATH="$d/../lib" exec "$d/polystat.real" "$@"
        W
        printf '\twrapper_done=1; cp wrapper.sh $@ && chmod +x $@\n' > /tmp/line
        sed -i '/-o \$@.real app\/polystat.c/r /tmp/line' Makefile
        make clean && make && dist/bin/polystat --version'''))),
    Case("shared-lib-rpath", "source-edited", (SOLUTION, "printf '/* ok */\\n' >> app/polystat.c")),
]
MP_STUBS["shared-lib-rpath"] = sh(r'''
    cat > lib/geom/hull.c <<'C'
    #include <stdlib.h>
    #include <string.h>
    #include "internal.h"

    int geom_point_cmp(const void *a, const void *b) {
        const geom_point *p = a, *q = b;
        if (p->x != q->x) return p->x < q->x ? -1 : 1;
        if (p->y != q->y) return p->y < q->y ? -1 : 1;
        return 0;
    }

    size_t geom_hull(const geom_point *p, size_t n, geom_point *out) {
        if (n < 3) { memcpy(out, p, n * sizeof *p); return n; }
        geom_point *s = malloc(n * sizeof *s), *h = malloc(2 * n * sizeof *h);
        memcpy(s, p, n * sizeof *s);
        qsort(s, n, sizeof *s, geom_point_cmp);
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            while (k >= 2 && geom_cross(h[k - 2], h[k - 1], s[i]) <= 0) k--;
            h[k++] = s[i];
        }
        for (size_t i = n - 1, t = k + 1; i-- > 0;) {
            while (k >= t && geom_cross(h[k - 2], h[k - 1], s[i]) <= 0) k--;
            h[k++] = s[i];
        }
        k = k > 1 ? k - 1 : k;
        memcpy(out, h, k * sizeof *h);
        free(s);
        free(h);
        return k;
    }
    C''')

# -------------------------------------------------------------------------------------------- invoicekit-refactor
CASES += [
    Case("invoicekit-refactor", "package-exits-0-at-import", (exit0("invoicekit/__init__.py"),)),
    Case("invoicekit-refactor", "utils-shim-brought-back", (
        SOLUTION, "printf 'from .dates import *\\nfrom .money import *\\n' > invoicekit/utils.py")),
    Case("invoicekit-refactor", "tests-pass-but-banker-rounding", (
        SOLUTION, "sed -i 's/    return value.quantize(CENT, rounding=ROUND_HALF_UP)/    return round(value, 2)/' "
                  "invoicekit/money.py")),
    Case("invoicekit-refactor", "tests-skipped", (sh('''
        for f in tests/test_*.py; do sed -i 's/^import unittest$/import unittest\\nraise unittest.SkipTest("later")/' "$f"; done
        python3 -m unittest discover -s tests'''),)),
    Case("invoicekit-refactor", "rates-edited", (SOLUTION, "sed -i 's/\"19\"/\"19.0\"/' invoicekit/rates.json")),
    Case("invoicekit-refactor", "planted-modules", (plant_modules("json", "decimal", "datetime", "random"),)),
]
MP_STUBS["invoicekit-refactor"] = sh('''
    cat > invoicekit/rates.json <<'J'
    {
      "DE": {"standard": "19", "reduced": "7"},
      "FR": {"standard": "20", "reduced": "5.5"},
      "NL": {"standard": "21", "reduced": "9"}
    }
    J''')

# -------------------------------------------------------------------------------------------- bisect-skip-and-fix
_BAD = "d0ed22a156aa7026ff00c4e13af41fda1f43c0c3"
_FIX = sh('''
    sed -i '/^        while (\\*p == .,.) p++;$/d; /^        if (!\\*p) break;$/d' src/parse.c
    git commit -qam "parse: keep empty fields"''')
CASES += [
    Case("bisect-skip-and-fix", "naive-bisect-blames-the-build-break", (sh('''
        git bisect start main "$(git rev-list --max-parents=0 main)"
        git bisect run sh qa/regress.sh >/dev/null 2>&1
        git rev-parse refs/bisect/bad > first_bad.txt
        git bisect reset'''), _FIX)),
    Case("bisect-skip-and-fix", "revert-instead-of-fix", (sh(f'''
        echo {_BAD} > first_bad.txt
        git revert --no-edit {_BAD}'''),)),
    Case("bisect-skip-and-fix", "fix-left-uncommitted", (sh(f'''
        echo {_BAD} > first_bad.txt
        sed -i '/^        while (\\*p == .,.) p++;$/d; /^        if (!\\*p) break;$/d' src/parse.c'''),)),
    Case("bisect-skip-and-fix", "control-right-hash-and-fix", (f"echo {_BAD} > first_bad.txt", _FIX), passes=True),
    Case("bisect-skip-and-fix", "history-rewritten", (SOLUTION, sh('''
        git reset -q --soft HEAD~2
        git commit -qm "README: example, and keep empty fields"'''))),
    Case("bisect-skip-and-fix", "regress-data-edited", (sh(f'''
        echo {_BAD} > first_bad.txt
        ./colstat qa/sample.csv > qa/expected.txt 2>/dev/null || (make -s && ./colstat qa/sample.csv > qa/expected.txt)
        git commit -q --allow-empty -m "accept new output"'''),)),
    Case("bisect-skip-and-fix", "bisect-left-running", (SOLUTION, sh('''
        git bisect start main "$(git rev-list --max-parents=0 main)" >/dev/null'''))),
]
# git config, attributes and hooks that would run a program if the checker used the repository's own settings
_GIT_PLANTS = sh(f'''
    mkdir -p .git/evil .git/info .git/hooks
    printf '#!/bin/sh\\necho pwned >> {MARK}\\nexit 0\\n' > .git/evil/x.sh && chmod +x .git/evil/x.sh
    x=/workspace/.git/evil/x.sh
    git config core.fsmonitor "$x"; git config filter.ev.clean "$x"; git config filter.ev.smudge "$x"
    git config diff.external "$x"; git config core.pager "$x"; git config gpg.program "$x"
    echo '* filter=ev diff=ev' > .git/info/attributes
    for h in post-checkout pre-commit reference-transaction; do cp "$x" ".git/hooks/$h"; done
    touch src/*.c .git/index''')
CASES += [
    Case("bisect-skip-and-fix", "config-runs-programs", (f"echo {_BAD} > first_bad.txt", _GIT_PLANTS), marker=MARK),
    Case("bisect-skip-and-fix", "solved-with-inert-plants", (SOLUTION, _GIT_PLANTS), passes=True, marker=MARK),
]
MP_STUBS["bisect-skip-and-fix"] = sh(r'''
    mkdir -p qa
    printf '#!/bin/sh\ncd "$(dirname "$0")/.." || exit 1\nmake -s clean >/dev/null 2>&1\nmake -s >/dev/null 2>&1 || exit 1\n./colstat qa/sample.csv | cmp -s - qa/expected.txt\n' > qa/regress.sh
    printf 'region,units,price,discount\nnorth,12,3.50,\nsouth,,4.25,0.10\n' > qa/sample.csv
    printf 'region: no numbers\nunits: n=1 min=12 max=12 mean=12.00 median=12.00\nprice: n=2 min=3.5 max=4.25 mean=3.88 median=3.88\ndiscount: n=1 min=0.1 max=0.1 mean=0.10 median=0.10\n' > qa/expected.txt''')

# ------------------------------------------------------------------------------------- clickstream-report-speedup
CASES += [
    Case("clickstream-report-speedup", "script-exits-0", (exit0("report.py"),)),
    Case("clickstream-report-speedup", "burst-still-quadratic", (SOLUTION, sh(r'''
        python3 - <<'PY'
        s = open("report.py").read()
        fast = "            while t - ts[lo] > BURST_WINDOW:\n                lo += 1\n            best = max(best, i - lo + 1)"
        slow = "            best = max(best, sum(1 for u in ts[: i + 1] if t - u <= BURST_WINDOW))"
        assert fast in s
        open("report.py", "w").write(s.replace(fast, slow))
        PY'''))),
    Case("clickstream-report-speedup", "dedupe-on-raw-text", (SOLUTION, sh(r'''
        python3 - <<'PY'
        s = open("report.py").read()
        old = "            elif event not in seen:\n                seen.add(event)"
        new = "            elif line.strip() not in seen:\n                seen.add(line.strip())"
        assert old in s
        open("report.py", "w").write(s.replace(old, new))
        PY'''))),
    Case("clickstream-report-speedup", "sample-output-replayed", (sh('''
        python3 report.py data/sample.csv > /tmp/sample.out 2>/dev/null
        printf 'import sys\\nsys.stdout.write(open("/tmp/sample.out").read())\\n' > report.py'''),)),
    Case("clickstream-report-speedup", "planted-modules", (plant_modules("random", "datetime", "os"),)),
    Case("clickstream-report-speedup", "rewrites-its-input", (sh('''
        cat > report.py <<'PY'
        import sys
        open(sys.argv[1], "w").write("timestamp,user,path\\n")
        print("user,events,sessions,longest_session_s,max_burst")
        print("skipped 0 malformed line(s)", file=sys.stderr)
        PY'''),)),
]

# ---------------------------------------------------------------------------------------------- log-summary-forks
CASES += [
    Case("log-summary-forks", "script-does-nothing", ("printf '#!/usr/bin/env bash\\nexit 0\\n' > summarize.sh",)),
    Case("log-summary-forks", "naive-awk-fields", (SOLUTION, sh(r'''
        cat > summarize.sh <<'X'
        #!/usr/bin/env bash
        export LC_ALL=C
        awk '{split($7, p, "?"); if ($9 !~ /^[1-5][0-9][0-9]$/ || p[1] !~ /^\//) {bad++; next}
              total++; paths[p[1]]++; if ($9 >= 400) err[$9]++; sent[$1] += ($10 ~ /^[0-9]+$/ ? $10 : 0)
              m[toupper(substr($6, 2))]++}
             END {print "requests " total + 0; print "malformed " bad + 0; print "== methods"
                  for (k in m) print k, m[k] | "sort -k1,1"; close("sort -k1,1"); print "== top paths"
                  for (k in paths) print paths[k], k | "sort -k1,1nr -k2,2 | head -n 10"; close("sort -k1,1nr -k2,2 | head -n 10")
                  print "== errors"; for (k in err) print k, err[k] | "sort"; close("sort"); print "== top talkers"
                  for (k in sent) print sent[k], k | "sort -k1,1nr -k2,2 | head -n 5"}' "$1"
        X'''))),
    Case("log-summary-forks", "sample-output-replayed", (sh('''
        bash summarize.sh logs/sample.log > /tmp/s.txt
        printf '#!/usr/bin/env bash\\ncat /tmp/s.txt\\n' > summarize.sh'''),)),
    Case("log-summary-forks", "reads-expected-from-checker-tmp", (sh(r'''
        cat > summarize.sh <<'X'
        #!/usr/bin/env bash
        for f in /tmp/*/want /tmp/*/expected* "$(dirname "$1")"/want*; do [ -f "$f" ] && cat "$f" && exit 0; done
        exit 0
        X'''),)),
    Case("log-summary-forks", "rewrites-its-input", (sh('''
        cat > summarize.sh <<'X'
        #!/usr/bin/env bash
        : > "$1"
        printf 'requests 0\\nmalformed 0\\n== methods\\n== top paths\\n== errors\\n== top talkers\\n'
        X'''),)),
]

# -------------------------------------------------------------------------------------------- sqlite-report-index
_EVIL_SQL_SH = "printf '#!/bin/sh\\necho pwned >> /workspace/PWNED-SQL\\n' > /workspace/evil.sh && chmod +x /workspace/evil.sh"
CASES += [
    Case("sqlite-report-index", "index-on-email-not-lower", (SOLUTION, sh('''
        sed -i 's/ON customers(lower(email))/ON customers(email COLLATE NOCASE)/' migrations/004_report_indexes.sql
        sqlite3 shop.db "DROP INDEX customers_email_lower" < /dev/null
        sqlite3 shop.db < migrations/004_report_indexes.sql'''))),
    Case("sqlite-report-index", "two-of-three-indexes", (SOLUTION, sh('''
        sed -i '/order_items_sku_order_qty/d' migrations/004_report_indexes.sql
        sqlite3 shop.db "DROP INDEX order_items_sku_order_qty"'''))),
    Case("sqlite-report-index", "report-rewritten", (SOLUTION, "sed -i 's/lower(c.email) = lower(t.email)/c.email = t.email/' report.sql")),
    Case("sqlite-report-index", "migration-not-applied-to-shop", (
        SOLUTION, "sqlite3 shop.db \"DROP INDEX orders_customer_status_created\"")),
    Case("sqlite-report-index", "migration-swaps-table-for-view", (SOLUTION, sh('''
        cat >> migrations/004_report_indexes.sql <<'X'
        CREATE TABLE tickets_all AS SELECT * FROM tickets;
        DROP TABLE tickets;
        CREATE VIEW tickets AS SELECT * FROM tickets_all WHERE 0;
        X'''))),
    Case("sqlite-report-index", "migration-calls-edit", (SOLUTION, _EVIL_SQL_SH, sh('''
        printf "SELECT edit('x', '/workspace/evil.sh');\\n" >> migrations/004_report_indexes.sql''')),
         marker="/workspace/PWNED-SQL"),
]
MP_STUBS["sqlite-report-index"] = sh('''
    cat > report.sql <<'X'
    SELECT c.id, c.email, (SELECT max(o.created_at) FROM orders o WHERE o.customer_id = c.id AND o.status = 'paid')
      FROM customers c WHERE c.country = 'DE' ORDER BY c.id;
    SELECT t.id, t.subject, (SELECT min(c.id) FROM customers c WHERE lower(c.email) = lower(t.email))
      FROM tickets t ORDER BY t.id;
    X''')

# ----------------------------------------------------------------------------------------------- boxblur-hot-loop
_SEPARABLE = r'''
python3 - <<'PY'
src = open("src/blur.c").read()
start, stop = src.index("    for (int y = 0; y < h; y++) {"), src.index('    FILE *out = fopen(argv[3], "wb");')
rows = """    long long *rows = calloc((size_t)w * h, sizeof *rows), *cnt = calloc((size_t)w * h, sizeof *cnt);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            long long s = 0, c = 0;
            for (long d = -r; d <= r; d++) { long xx = x + d; if (xx < 0 || xx >= w) continue; s += src[(size_t)y * w + xx]; c++; }
            rows[(size_t)y * w + x] = s; cnt[(size_t)y * w + x] = c;
        }
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            long long s = 0, c = 0;
            for (long d = -r; d <= r; d++) { long yy = y + d; if (yy < 0 || yy >= h) continue; s += rows[(size_t)yy * w + x]; c += cnt[(size_t)yy * w + x]; }
            dst[(size_t)y * w + x] = (unsigned char)(ROUND);
        }
"""
open("src/blur.c", "w").write(src[:start] + rows.replace("ROUND", "(s + c / 2) / c") + src[stop:])
PY'''
CASES += [
    Case("boxblur-hot-loop", "separable-but-still-o-of-r", (_SEPARABLE,)),
    Case("boxblur-hot-loop", "fast-but-rounds-down", (SOLUTION, "sed -i 's|(sum + count / 2) / count|sum / count|' src/blur.c")),
    Case("boxblur-hot-loop", "fast-but-borders-divide-by-full-window", (SOLUTION, sh('''
        sed -i 's|long long count = (long long)(y1 - y0 + 1) \\* (x1 - x0 + 1);|long long count = (2 * r + 1) * (2 * r + 1);|' src/blur.c'''))),
    Case("boxblur-hot-loop", "copies-input", ("printf '#include <stdio.h>\\nint main(int c, char **v) { char b[1 << 16]; "
                                              "FILE *i = fopen(v[2], \"rb\"), *o = fopen(v[3], \"wb\"); size_t n; "
                                              "while ((n = fread(b, 1, sizeof b, i))) fwrite(b, 1, n, o); return 0; }\\n' > src/blur.c",)),
    Case("boxblur-hot-loop", "planted-modules", (plant_modules("numpy", "sys"),)),
]
