"""Real runs of the command line, as a user types them (``python -m td2048.cli ARGS``), and the check that
bad input got its one-line error."""

import fcntl
import os
import select
import struct
import subprocess
import sys
import termios
import time


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


def td2048_on_a_terminal(*args, env=None, timeout=600):
    """Run ``td2048 ARGS`` to its end with stderr on a pseudo-terminal of 100 x 30 (as a person runs it) and
    stdout on a pipe (as a script reads it): (exit code, stdout, all that the terminal got)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "td2048.cli", *map(str, args)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=slave, env={**(env or os.environ), "TERM": "xterm-256color"})
    os.close(slave)
    seen = bytearray()
    deadline = time.monotonic() + timeout
    try:
        while True:  # the terminal read as it is written (a full one would block the command); EOF or EIO at its end
            assert time.monotonic() < deadline, bytes(seen[-2000:])
            if select.select([master], [], [], 1)[0]:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                seen += chunk
        out = proc.stdout.read().decode()
        proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
        os.close(master)
    return proc.returncode, out, seen.decode(errors="replace")
