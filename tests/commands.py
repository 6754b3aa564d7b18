"""Real runs of the command line, as a user types them (``python -m td2048.cli ARGS``), and the check that
bad input got its one-line error.

:func:`td2048` runs each command in a process of its own, forked from a server that has already imported td2048
(:mod:`forkserver`: the same process, output and exit code, without half a second of imports per run); a run
whose environment would change those imports, and every run when ``TD2048_TEST_FORKSERVER=0``, starts a fresh
``python -m td2048.cli``.
"""

import atexit
import fcntl
import os
import select
import selectors
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

import forkserver


def td2048(*args, env=None, cwd=None, timeout=600):
    """Run ``td2048 ARGS`` to its end (stdin closed; ``env``: the whole environment, default this one's)."""
    args = [str(a) for a in args]
    env = dict(os.environ if env is None else env)
    server = _server()
    if server is None or forkserver.import_time_environment(env) != server.environment:
        return subprocess.run([sys.executable, "-m", "td2048.cli", *args], capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, env=env, cwd=cwd, timeout=timeout)
    return server.run(args, env, cwd, timeout)


class _ForkServer:
    """This process's :mod:`forkserver`, started on the first run and ended with this process."""

    def __init__(self):
        self.folder = tempfile.mkdtemp(prefix="td2048-forkserver-")
        self.path = str(Path(self.folder) / "socket")
        self.environment = forkserver.import_time_environment(os.environ)
        self.process = subprocess.Popen([sys.executable, forkserver.__file__, self.path], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if self.process.stdout.readline().strip() != "ready":
            raise RuntimeError("the fork server did not start")
        atexit.register(self.close)

    def close(self):
        self.process.stdin.close()  # its end of stdin ends it
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        for name in ("socket",):
            Path(self.folder, name).unlink(missing_ok=True)
        os.rmdir(self.folder)

    def run(self, args, env, cwd, timeout):
        command = [sys.executable, "-m", "td2048.cli", *args]
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        stdin = os.open(os.devnull, os.O_RDONLY)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.connect(self.path)
            forkserver.send_message(connection, {"args": args, "env": env, "cwd": str(cwd) if cwd else None},
                                    fds=(stdin, out_write, err_write))
            for fd in (stdin, out_write, err_write):
                os.close(fd)
            pid = forkserver.receive_message(connection)[0]["pid"]
            deadline = time.monotonic() + timeout
            output = {out_read: bytearray(), err_read: bytearray()}
            with selectors.DefaultSelector() as selector:
                for fd in output:
                    selector.register(fd, selectors.EVENT_READ)
                try:
                    while selector.get_map():
                        left = deadline - time.monotonic()
                        if left <= 0:
                            os.kill(pid, signal.SIGKILL)
                            raise subprocess.TimeoutExpired(command, timeout, bytes(output[out_read]),
                                                            bytes(output[err_read]))
                        for key, _ in selector.select(left):
                            chunk = os.read(key.fd, 1 << 16)
                            if chunk:
                                output[key.fd] += chunk
                            else:
                                selector.unregister(key.fd)
                finally:
                    os.close(out_read)
                    os.close(err_read)
            connection.settimeout(max(1.0, deadline - time.monotonic()))
            returncode = forkserver.receive_message(connection)[0]["returncode"]
        return subprocess.CompletedProcess(command, returncode, _text(output[out_read]), _text(output[err_read]))


def _text(data: bytes) -> str:
    """As ``subprocess.run(..., text=True)`` decodes."""
    return data.decode().replace("\r\n", "\n").replace("\r", "\n")


_servers = {}


def _server():
    """This process's fork server (None when TD2048_TEST_FORKSERVER=0)."""
    if os.environ.get("TD2048_TEST_FORKSERVER", "1") == "0":
        return None
    if os.getpid() not in _servers:  # a process forked from this one starts its own
        _servers[os.getpid()] = _ForkServer()
    return _servers[os.getpid()]


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
