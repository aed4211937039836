import json
from pathlib import Path


def test_summary():
    data = json.loads(Path("/app/summary.json").read_text())
    assert data == {"widget": {"units": 5, "revenue": 13.0},
                    "gadget": {"units": 3, "revenue": 29.0},
                    "gizmo": {"units": 5, "revenue": 5.5}}
