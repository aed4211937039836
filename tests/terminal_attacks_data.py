"""Attacks on the data-science and scientific-computing tasks' checkers (area `data`).

Each task's agent-written program is run by its checker on inputs the checker generates, so the attacks here are
programs that only replay the shipped answer, programs that exit 0 without output, edited inputs, and careless
solutions (float rounding, a missing edge case) that pass on the shipped example but not on fresh data.
"""

from __future__ import annotations

from terminal_attack_kit import SOLUTION, Case, exit0, sh

CASES: list[Case] = [
    # ------------------------------------------------------------------------------------ expenses-monthly-eur
    Case("expenses-monthly-eur", "replays-shipped-report", (SOLUTION, sh('''
        cp monthly.csv /tmp/report.csv
        printf 'import sys\\nprint(open("/tmp/report.csv").read(), end="")\\n' > monthly.py'''))),
    Case("expenses-monthly-eur", "script-exits-0", (SOLUTION, exit0("monthly.py"))),
    Case("expenses-monthly-eur", "float-rounding", (SOLUTION, sh('''
        sed -i 's/{total.quantize(Decimal(.0.01.), rounding=ROUND_HALF_UP)}/{float(total):.2f}/' monthly.py
        python3 monthly.py expenses.csv rates.json > monthly.csv'''))),
    Case("expenses-monthly-eur", "rates-edited", (SOLUTION, "sed -i 's/0.9213/0.9200/' rates.json")),
    # ----------------------------------------------------------------------------------- customer-dedupe-fuzzy
    Case("customer-dedupe-fuzzy", "replays-shipped-output", (SOLUTION, sh('''
        cp customers_dedup.csv /tmp/out.csv
        printf 'print(open("/tmp/out.csv").read(), end="")\\n' > dedupe.py'''))),
    Case("customer-dedupe-fuzzy", "script-exits-0", (SOLUTION, exit0("dedupe.py"))),
    Case("customer-dedupe-fuzzy", "groups-without-chains", (SOLUTION, sh('''
        mv dedupe.py rules.py
        cat > dedupe.py <<'PY'
        import csv, sys
        from rules import norm_email, norm_name, norm_phone
        rows = sorted(csv.DictReader(open(sys.argv[1], encoding="utf-8")), key=lambda r: int(r["id"]))
        groups = {}
        for r in rows:
            e = norm_email(r["email"])
            key = ("e", e) if e else ("np", norm_name(r["name"]), norm_phone(r["phone"]) or r["id"])
            groups.setdefault(key, []).append(r)
        w = csv.writer(sys.stdout, lineterminator="\\n")
        w.writerow(["id", "name", "ids"])
        for g in sorted(groups.values(), key=lambda g: int(g[0]["id"])):
            w.writerow([g[0]["id"], g[0]["name"].strip(), " ".join(r["id"] for r in g)])
        PY
        python3 dedupe.py customers.csv > customers_dedup.csv'''))),
    Case("customer-dedupe-fuzzy", "input-edited", (SOLUTION, "sed -i '2d' customers.csv")),
    # ------------------------------------------------------------------------------------------- event-sessions
    Case("event-sessions", "replays-shipped-output", (SOLUTION, sh('''
        cp sessions.csv /tmp/out.csv
        printf 'print(open("/tmp/out.csv").read(), end="")\\n' > sessions.py'''))),
    Case("event-sessions", "script-exits-0", (SOLUTION, exit0("sessions.py"))),
    Case("event-sessions", "ignores-gap-option", (SOLUTION, "sed -i 's/limit = args.gap \\* 60/limit = 30 * 60/' sessions.py")),
    Case("event-sessions", "gap-limit-exclusive", (SOLUTION, sh('''
        sed -i 's/ts - current\\[2\\] <= limit/ts - current[2] < limit/' sessions.py
        python3 sessions.py events.jsonl > sessions.csv'''))),
    Case("event-sessions", "keeps-duplicates", (SOLUTION, sh('''
        sed -i 's/seen = set()/seen = []/; s/seen.add(key)/seen.append(key)/' sessions.py
        python3 sessions.py events.jsonl > sessions.csv'''))),
    # ---------------------------------------------------------------------------------- quarterly-region-report
    Case("quarterly-region-report", "replays-shipped-report", (SOLUTION, sh('''
        cp report_2024Q1.csv /tmp/out.csv
        printf 'print(open("/tmp/out.csv").read(), end="")\\n' > report.py'''))),
    Case("quarterly-region-report", "script-exits-0", (SOLUTION, exit0("report.py"))),
    Case("quarterly-region-report", "quarter-argument-ignored", (SOLUTION, "sed -i 's/main(\\*sys.argv\\[1:5\\])/main(*sys.argv[1:4], \"2024Q1\")/' report.py")),
    Case("quarterly-region-report", "tickets-edited", (SOLUTION, "sed -i '2d' support_tickets.csv")),
    # ------------------------------------------------------------------------------------- sensor-hampel-filter
    Case("sensor-hampel-filter", "replays-shipped-flags", (SOLUTION, sh('''
        cp flagged.csv /tmp/out.csv
        printf 'print(open("/tmp/out.csv").read(), end="")\\n' > hampel.py'''))),
    Case("sensor-hampel-filter", "script-exits-0", (SOLUTION, exit0("hampel.py"))),
    Case("sensor-hampel-filter", "options-ignored", (SOLUTION, "sed -i 's/i - args.k/i - 5/; s/i + args.k + 1/i + 6/; s/args.t \\*/3.0 */' hampel.py")),
    Case("sensor-hampel-filter", "ends-left-out", (SOLUTION, sh('''
        sed -i 's/for i in range(len(v)):/for i in range(args.k, len(v) - args.k):/' hampel.py
        python3 hampel.py readings.csv > flagged.csv'''))),
    Case("sensor-hampel-filter", "unscaled-mad", (SOLUTION, sh('''
        sed -i 's/args.t \\* 1.4826 \\* mad/args.t * mad/' hampel.py
        python3 hampel.py readings.csv > flagged.csv'''))),
    # ---------------------------------------------------------------------------------- ode-adaptive-integrator
    Case("ode-adaptive-integrator", "module-exits-0", (SOLUTION, exit0("ode.py"))),
    Case("ode-adaptive-integrator", "fixed-step-rk4", (SOLUTION, sh('''
        cat > ode.py <<'PY'
        def integrate(f, t0, y0, t1, n=4000):
            h, y, t = (t1 - t0) / n, [float(v) for v in y0], t0
            for _ in range(n if t1 != t0 else 0):
                k1 = f(t, y)
                k2 = f(t + h / 2, [a + h / 2 * b for a, b in zip(y, k1)])
                k3 = f(t + h / 2, [a + h / 2 * b for a, b in zip(y, k2)])
                k4 = f(t + h, [a + h * b for a, b in zip(y, k3)])
                y = [a + h / 6 * (b + 2 * c + 2 * d + e) for a, b, c, d, e in zip(y, k1, k2, k3, k4)]
                t += h
            return y
        PY
        python3 orbit.py'''))),
    Case("ode-adaptive-integrator", "forward-only", (SOLUTION, sh('''
        sed -i 's/    direction = 1.0 if t1 > t0 else -1.0/    direction = 1.0/' ode.py
        python3 orbit.py'''))),
    Case("ode-adaptive-integrator", "orbit-log-written-by-hand", (SOLUTION, sh('''
        echo 'def integrate(f, t0, y0, t1):' > ode.py
        echo '    return list(y0)' >> ode.py'''))),
    # -------------------------------------------------------------------------------------- pipe-friction-roots
    Case("pipe-friction-roots", "module-exits-0", (SOLUTION, exit0("roots.py"))),
    Case("pipe-friction-roots", "replays-shipped-table", (SOLUTION, sh('''
        cp friction.csv /tmp/out.csv
        printf 'import math\\n' > roots.py
        printf 'def find_root(f, a, b, xtol=1e-12):\\n    raise ValueError\\n' >> roots.py
        printf 'if __name__ == "__main__":\\n    print(open("/tmp/out.csv").read(), end="")\\n' >> roots.py'''))),
    Case("pipe-friction-roots", "newton-root-finder", (SOLUTION, sh('''
        sed -i 's/^def find_root(/def _bisect(/; s/return find_root(/return _bisect(/' roots.py
        cat >> roots.py <<'PY'


        def find_root(f, a, b, xtol=1e-12):
            if f(a) * f(b) > 0:
                raise ValueError("no sign change")
            x = (a + b) / 2
            for _ in range(60):
                h = 1e-7 * max(1, abs(x))
                d = (f(x + h) - f(x - h)) / (2 * h)
                if d == 0:
                    break
                x, x_old = x - f(x) / d, x
                if abs(x - x_old) < xtol:
                    break
            return x
        PY
        python3 roots.py pipes.csv fluid.json > friction.csv'''))),
    Case("pipe-friction-roots", "roughness-in-mm", (SOLUTION, sh('''
        sed -i 's|eps = float(row\\["roughness_mm"\\]) / 1000|eps = float(row["roughness_mm"])|' roots.py
        python3 roots.py pipes.csv fluid.json > friction.csv'''))),
    # ------------------------------------------------------------------------------------- flow-volume-integral
    Case("flow-volume-integral", "script-exits-0", (SOLUTION, exit0("volume.py"))),
    Case("flow-volume-integral", "replays-shipped-volumes", (SOLUTION, sh('''
        cp volumes.csv /tmp/out.csv
        printf 'print(open("/tmp/out.csv").read(), end="")\\n' > volume.py'''))),
    Case("flow-volume-integral", "gap-of-exactly-300-s-skipped", (
        SOLUTION, "sed -i 's/if t1 - t0 > MAX_GAP/if t1 - t0 >= MAX_GAP/' volume.py")),
    Case("flow-volume-integral", "no-split-at-midnight", (SOLUTION, sh('''
        sed -i 's/^        while day_of(t0) != day_of(t1):.*$/        while False:/' volume.py
        python3 volume.py flow_log.csv calibration.json > volumes.csv'''))),
    # ------------------------------------------------------------------------------------------ decay-curve-fit
    Case("decay-curve-fit", "script-exits-0", (SOLUTION, exit0("fit.py"))),
    Case("decay-curve-fit", "replays-shipped-fit", (SOLUTION, sh('''
        cp fit.txt /tmp/out.txt
        printf 'print(open("/tmp/out.txt").read(), end="")\\n' > fit.py'''))),
    Case("decay-curve-fit", "unweighted-fit", (SOLUTION, sh('''
        sed -i 's|    w = 1 / s$|    w = np.ones_like(s)|' fit.py
        python3 fit.py decay.csv > fit.txt'''))),
    Case("decay-curve-fit", "errors-rescaled-by-chi2", (SOLUTION, sh('''
        sed -i 's|    err = np.sqrt(np.diag(np.linalg.inv(J.T @ J)))|    err = np.sqrt(np.diag(np.linalg.inv(J.T @ J)) * float(np.sum(((p[0] * e + p[2] - y) * w) ** 2)) / (len(t) - 3))|' fit.py
        python3 fit.py decay.csv > fit.txt'''))),
    Case("decay-curve-fit", "data-edited", (SOLUTION, "sed -i '/,0$/d' decay.csv")),
    # ----------------------------------------------------------------------------------------- sparse-cg-solver
    Case("sparse-cg-solver", "module-exits-0", (SOLUTION, exit0("solve.py"))),
    Case("sparse-cg-solver", "copies-shipped-solution", (SOLUTION, sh('''
        cp x.txt /tmp/x.txt
        printf 'import shutil, sys\\nshutil.copy("/tmp/x.txt", sys.argv[3])\\n' > solve.py'''))),
    Case("sparse-cg-solver", "lower-triangle-only", (SOLUTION, sh('''
        sed -i 's/    if header\\[4\\] == "symmetric":/    if False:/; s/    while np.linalg.norm(r) > target:.*/    for _restart in range(1):/' solve.py
        sed -i 's/        for _ in range(20 \\* n):/        for _ in range(300):/' solve.py
        python3 solve.py system.mtx rhs.txt x.txt || true'''))),
    Case("sparse-cg-solver", "rhs-edited", (SOLUTION, "sed -i '1s/.*/0.0/' rhs.txt")),
]

MP_STUBS: dict[str, str] = {
    "sparse-cg-solver": "python3 -c 'print(\"\\n\".join([\"1.0\"] * 16900))' > rhs.txt",
    "flow-volume-integral": "printf '{\"meter\": \"FM-204\", \"unit\": \"L/min\", \"gain\": 0.03, \"offset\": -2.4}\\n' > calibration.json",
    "pipe-friction-roots": "printf '{\"fluid\": \"water\", \"density_kg_m3\": 998.2, \"viscosity_pa_s\": 0.001002}\\n' > fluid.json",
    "ode-adaptive-integrator": "printf '{\"eccentricity\": 0.8, \"mu\": 1.0, \"semi_major_axis\": 1.0, \"periods\": 4}\\n' > orbit.json",
    "quarterly-region-report": sh('''
        python3 -c '
        import csv, sys
        names = [r["Account Name"] for r in csv.DictReader(open("crm_accounts.csv", encoding="utf-8-sig"))]
        w = csv.writer(sys.stdout, lineterminator="\\n")
        w.writerow(["ticket", "account_name", "created", "priority", "subject"])
        for k, n in enumerate(names * 4):
            w.writerow([f"T{7000 + k}", n, f"2024-0{k % 6 + 1}-1{k % 9} 09:00", "low", "Login fails"])' > support_tickets.csv'''),
    "event-sessions": sh('''
        python3 -c '
        import json
        for i in range(600):
            print(json.dumps({"user": "u%d" % (i % 40 + 1), "ts": 1714543200 + i * 420, "event": "view"}))' > events.jsonl'''),
    "expenses-monthly-eur": sh('''
        cat > rates.json <<'X'
        {"2024-01": {"USD": "0.9200", "GBP": "1.1600", "CHF": "1.0600"},
         "2024-02": {"USD": "0.9250", "GBP": "1.1700", "CHF": "1.0600"},
         "2024-03": {"USD": "0.9200", "GBP": "1.1700", "CHF": "1.0350"},
         "2024-04": {"USD": "0.9300", "GBP": "1.1650", "CHF": "1.0250"}}
        X'''),
}
