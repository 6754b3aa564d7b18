"""Real runs of the command line, as a user types them (``python -m td2048.cli ARGS``), and the check that
bad input got its one-line error."""

import subprocess
import sys


def td2048(*args, env=None, cwd=None, timeout=600):
    """Run ``td2048 ARGS`` to its end (stdin closed; ``env``: the whole environment, default this one's)."""
    return subprocess.run([sys.executable, "-m", "td2048.cli", *map(str, args)], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, env=env, cwd=cwd, timeout=timeout)


def assert_one_line_error(result, *fragments):
    """Exit 2, one line on stderr holding every fragment, no traceback."""
    assert result.returncode == 2, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
