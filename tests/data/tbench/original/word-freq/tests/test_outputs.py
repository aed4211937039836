"""The frequency table must match the corpus the task shipped (embedded here, so editing it cannot help)."""
import re
from collections import Counter
from pathlib import Path

CORPUS = """The river ran past the mill, and the mill wheel turned.
A heron stood in the shallows; the heron did not move.
Rain came at noon. Rain, then sun, then rain again!
"""


def expected() -> list[str]:
    counts = Counter(re.findall(r"[a-z]+", CORPUS.lower()))
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return ["word,count"] + [f"{w},{n}" for w, n in rows]


def test_file_exists():
    assert Path("/app/freq.csv").is_file()


def test_table_is_exact():
    lines = Path("/app/freq.csv").read_text().strip().splitlines()
    assert lines == expected()
