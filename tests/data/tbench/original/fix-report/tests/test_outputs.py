"""The fixed script must be right on the shipped data and on data it has never seen."""
import json
import os
import subprocess
import tempfile
from pathlib import Path


def test_totals_for_the_shipped_data():
    totals = json.loads(Path("/app/out/totals.json").read_text())
    assert totals == {"east": 8.85, "north": 13.75, "south": 3.75}


def test_the_script_works_on_new_data():
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "a.csv").write_text("region,amount\nwest,1.15\nwest,2.20\n")
        Path(tmp, "b.csv").write_text("region,amount\nnorth,0.05\n")
        saved = Path("/app/out/totals.json").read_bytes()
        try:
            subprocess.run(["python3", "/app/report.py"], env={**os.environ, "SALES_DIR": tmp}, check=True,
                           timeout=20)
            assert json.loads(Path("/app/out/totals.json").read_text()) == {"north": 0.05, "west": 3.35}
        finally:
            Path("/app/out/totals.json").write_bytes(saved)
