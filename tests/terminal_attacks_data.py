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
]

MP_STUBS: dict[str, str] = {
    "expenses-monthly-eur": sh('''
        cat > rates.json <<'X'
        {"2024-01": {"USD": "0.9200", "GBP": "1.1600", "CHF": "1.0600"},
         "2024-02": {"USD": "0.9250", "GBP": "1.1700", "CHF": "1.0600"},
         "2024-03": {"USD": "0.9200", "GBP": "1.1700", "CHF": "1.0350"},
         "2024-04": {"USD": "0.9300", "GBP": "1.1650", "CHF": "1.0250"}}
        X'''),
}
