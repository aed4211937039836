"""The converter is run on inputs it has never seen; its output is compared as parsed JSON."""
import json
import subprocess
import tempfile

PROGRAM = "/app/ini2json.py"


def run(text: str) -> subprocess.CompletedProcess:
    with tempfile.NamedTemporaryFile("w", suffix=".ini", delete=False) as handle:
        handle.write(text)
    return subprocess.run(["python3", PROGRAM, handle.name], capture_output=True, text=True, timeout=20)


def test_sections_types_and_comments():
    res = run("# top\nTitle = 'My App'\n\n[db]\nPort = -5432\nuser: admin\nssl = off\nratio = 0.5\n")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == {"global": {"title": "My App"},
                                      "db": {"port": -5432, "user": "admin", "ssl": False, "ratio": "0.5"}}


def test_merging_and_last_value_wins():
    res = run("[a]\nx = 1\n[b]\ny = \"two\"\n[a]\nx = 3\nz = TRUE\n")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == {"a": {"x": 3, "z": True}, "b": {"y": "two"}}


def test_output_format_is_sorted_and_indented():
    res = run("[s]\nb = 1\na = 2\n")
    assert res.stdout.strip() == json.dumps({"s": {"a": 2, "b": 1}}, sort_keys=True, indent=2)


def test_a_bad_line_is_reported():
    res = run("[ok]\nk = v\nthis is not valid\n")
    assert res.returncode == 2 and res.stdout == ""
    assert "line 3: this is not valid" in res.stderr


def test_mismatched_quotes_are_kept():
    res = run("q = 'half\"\n")
    assert json.loads(res.stdout) == {"global": {"q": "'half\""}}
