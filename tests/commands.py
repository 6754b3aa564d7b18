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
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from pathlib import Path

import forkserver


def td2048(*args, env=None, cwd=None, timeout=600):
    """Run ``td2048 ARGS`` to its end (stdin closed; ``env``: the whole environment, default this one's), as
    ``subprocess.run(..., capture_output=True, text=True)`` runs it."""
    with start_td2048(*args, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def start_td2048(*args, env=None, cwd=None, stdin=subprocess.DEVNULL, stdout=None, stderr=None, text=False,
                 start_new_session=False):
    """``td2048 ARGS`` started as ``subprocess.Popen`` starts it (the same arguments): forked from this process's
    fork server (a :class:`ForkedProcess`, with Popen's methods), else a ``python -m td2048.cli`` Popen."""
    args = [str(a) for a in args]
    env = dict(os.environ if env is None else env)
    if "PYTEST_CURRENT_TEST" in os.environ:  # the test running now, not the one that made a session's env
        env["PYTEST_CURRENT_TEST"] = os.environ["PYTEST_CURRENT_TEST"]
    server = _server()
    if server is None or forkserver.import_time_environment(env) != server.environment:
        return subprocess.Popen([sys.executable, "-m", "td2048.cli", *args], stdin=stdin, stdout=stdout,
                                stderr=stderr, text=text, env=env, cwd=cwd, start_new_session=start_new_session)
    return ForkedProcess(server, args, env, cwd, stdin, stdout, stderr, text, start_new_session)


class ForkedProcess:
    """A run of ``td2048 ARGS`` forked from the fork server, with the part of ``subprocess.Popen`` the tests use:
    ``pid``, ``args``, ``returncode``, ``stdout``/``stderr`` (files on pipes, for PIPE), :meth:`poll`,
    :meth:`wait`, :meth:`communicate`, :meth:`send_signal`, :meth:`terminate`, :meth:`kill`, ``with``."""

    def __init__(self, server, args, env, cwd, stdin, stdout, stderr, text, start_new_session):
        self.args = [sys.executable, "-m", "td2048.cli", *args]
        self.returncode = None
        self.stdin = None
        opened, ours = [], {}

        def child_end(spec, fd, name):
            if spec is subprocess.PIPE:
                read, write = os.pipe()
                ours[name] = os.fdopen(read, "r" if text else "rb")
                opened.append(write)
                return write
            if spec is subprocess.DEVNULL:
                opened.append(os.open(os.devnull, os.O_RDWR))
                return opened[-1]
            if spec is None:
                return fd
            return spec if isinstance(spec, int) else spec.fileno()

        if stdin is subprocess.PIPE:
            raise NotImplementedError("stdin=PIPE")
        fds = [child_end(stdin, 0, "stdin"), child_end(stdout, 1, "stdout")]
        fds.append(fds[1] if stderr is subprocess.STDOUT else child_end(stderr, 2, "stderr"))
        self.stdout, self.stderr = ours.get("stdout"), ours.get("stderr")
        self._connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._connection.connect(server.path)
            forkserver.send_message(self._connection, {"args": args, "env": env, "cwd": str(cwd) if cwd else None,
                                                       "new_session": start_new_session}, fds=fds)
            self.pid = forkserver.receive_message(self._connection)[0]["pid"]
        finally:
            for fd in opened:
                os.close(fd)

    def poll(self):
        if self.returncode is None and select.select([self._connection], [], [], 0)[0]:
            self._take_returncode()
        return self.returncode

    def wait(self, timeout=None):
        if self.returncode is None:
            if not select.select([self._connection], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired(self.args, timeout)
            self._take_returncode()
        return self.returncode

    def _take_returncode(self):
        message, _ = forkserver.receive_message(self._connection)
        self.returncode = message["returncode"]
        self._connection.close()

    def communicate(self, input=None, timeout=None):
        """Read stdout and stderr to their ends, then wait: (out, err), None for those not on a pipe."""
        if input is not None:
            raise NotImplementedError("input")
        results = {}
        readers = [threading.Thread(target=lambda n, f: results.__setitem__(n, f.read()), args=(name, f), daemon=True)
                   for name, f in (("stdout", self.stdout), ("stderr", self.stderr)) if f is not None and not f.closed]
        deadline = None if timeout is None else time.monotonic() + timeout
        for reader in readers:
            reader.start()
        for reader in readers:
            reader.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
            if reader.is_alive():
                raise subprocess.TimeoutExpired(self.args, timeout)
        self.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        for f in (self.stdout, self.stderr):
            if f is not None:
                f.close()
        return results.get("stdout"), results.get("stderr")

    def send_signal(self, sig):
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self):
        self.send_signal(signal.SIGTERM)

    def kill(self):
        self.send_signal(signal.SIGKILL)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for f in (self.stdout, self.stderr):
            if f is not None:
                f.close()
        self.wait()


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
        Path(self.path).unlink(missing_ok=True)
        os.rmdir(self.folder)


_servers = {}


def _server():
    """This process's fork server (None when TD2048_TEST_FORKSERVER=0)."""
    if os.environ.get("TD2048_TEST_FORKSERVER", "1") == "0":
        return None
    if os.getpid() not in _servers:  # a process forked from this one starts its own
        _servers[os.getpid()] = _ForkServer()
    return _servers[os.getpid()]


def assert_one_line_error(result, *fragments, code=2):
    """Exit ``code`` (2, bad input), one line on stderr holding every fragment, no traceback."""
    assert result.returncode == code, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def td2048_on_a_terminal(*args, env=None, timeout=600):
    """Run ``td2048 ARGS`` to its end with stderr on a pseudo-terminal of 100 x 30 (as a person runs it) and
    stdout on a pipe (as a script reads it): (exit code, stdout, all that the terminal got)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    proc = start_td2048(*args, stdout=subprocess.PIPE, stderr=slave,
                        env={**(env or os.environ), "TERM": "xterm-256color"})
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
