import subprocess
import sys


def test_cli_version():
    out = subprocess.run([sys.executable, "-m", "td2048.cli", "--version"], capture_output=True, text=True)
    assert out.returncode == 0
