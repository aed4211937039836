import subprocess
from pathlib import Path


def test_banner():
    expected = subprocess.run(["figlet", "HELLO"], capture_output=True, text=True, check=True).stdout
    assert Path("/app/banner.txt").read_text() == expected
