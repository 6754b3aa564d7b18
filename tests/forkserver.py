"""Runs of ``td2048 ARGS`` forked from a process that has already imported the command line.

A run of ``python -m td2048.cli`` spends most of half a second, before it reads its arguments, importing NumPy,
Numba, matplotlib and td2048 and setting up Numba's compiler; the suite makes a few hundred such runs. So each
xdist worker starts one server process (this file, run as a script) that imports all of that once, and forks a
child for each run: the child takes the run's stdin, stdout and stderr (file descriptors passed over a Unix
socket), its environment, working directory and arguments, makes new ``sys.std*`` streams as a fresh
interpreter would, runs ``td2048.cli`` as ``__main__``, and ends as Python ends (joining threads, atexit
functions, flushing). The caller sees a real process: its pid, its exit code or signal, its output.

What it skips is the interpreter's start and the imports, so a run whose environment would change how those
happen (a ``NUMBA_*``, ``PYTHON*`` or ``MPL*`` variable that differs from the server's) is started the usual
way, by :func:`commands.td2048`; so is every run when ``TD2048_TEST_FORKSERVER=0``.

The server is single-threaded (a fork copies only the thread that calls it): one loop that accepts requests and
watches its children through pidfds.
"""

from __future__ import annotations

import io
import json
import os
import selectors
import signal
import socket
import struct
import sys

# Variables read while Python starts or a module is imported: a run that differs from the server in one of
# these is not forked from it. (PYTHONUNBUFFERED and PYTHONFAULTHANDLER are applied in the child.)
IMPORT_TIME_PREFIXES = ("NUMBA_", "PYTHON", "MPL", "LD_", "OMP_", "MKL_", "OPENBLAS_", "TD2048_TEST_")
APPLIED_IN_CHILD = ("PYTHONUNBUFFERED", "PYTHONFAULTHANDLER")

_HEADER = struct.Struct("!I")


def import_time_environment(env) -> dict:
    """The part of an environment that the server fixed when it started."""
    return {k: v for k, v in env.items() if k.startswith(IMPORT_TIME_PREFIXES) and k not in APPLIED_IN_CHILD}


def send_message(sock, message: dict, fds=()) -> None:
    """One message, with the descriptors ``fds`` passed along with its first bytes."""
    data = json.dumps(message).encode()
    payload = _HEADER.pack(len(data)) + data
    sent = socket.send_fds(sock, [payload], list(fds)) if fds else 0
    sock.sendall(payload[sent:])


def receive_message(sock, max_fds: int = 0) -> tuple[dict | None, list[int]]:
    """One message (None at end of stream) and the descriptors that came with it. Reads exactly the message's
    bytes, so that a message sent right after it (a run's return code after its pid) waits for the next call."""
    fds: list[int] = []

    def exactly(size):
        data = b""
        while len(data) < size:
            if max_fds and not fds:
                got, more, _, _ = socket.recv_fds(sock, size - len(data), max_fds)
                fds.extend(more)
            else:
                got = sock.recv(size - len(data))
            if not got:
                return None
            data += got
        return data

    header = exactly(_HEADER.size)
    body = exactly(_HEADER.unpack(header)[0]) if header is not None else None
    if body is None:
        for fd in fds:
            os.close(fd)
        return None, []
    return json.loads(body), fds


def preload() -> None:
    """Import what the commands import, and set up Numba's compiler (what every run would do first)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.figure  # noqa: F401
    import numba  # noqa: F401
    from numba.core.registry import cpu_target

    import td2048.cli
    import td2048.cli.__main__  # noqa: F401  every command's module; then forgotten, as runpy wants to run it anew

    del sys.modules["td2048.cli.__main__"], td2048.cli.__main__
    for name in ("td2048.learn", "td2048.run", "td2048.play", "td2048.plot", "td2048.judge", "td2048.io.model",
                 "td2048.io.records", "td2048.search", "td2048.solve", "td2048.bench", "td2048.stats",
                 "rich.progress", "rich.console"):
        try:
            __import__(name)
        except ImportError:
            pass
    cpu_target.target_context.refresh()  # the registries Numba installs before it loads its first kernel


def _new_stdio(unbuffered: bool) -> None:
    """sys.stdin/stdout/stderr on descriptors 0, 1, 2, made as Python makes them at its start."""
    encoding = sys.stdout.encoding
    stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding=encoding,
                             errors=sys.stdin.errors)
    streams = [stdin]
    for fd, errors in ((1, sys.stdout.errors), (2, "backslashreplace")):
        raw = io.FileIO(fd, "w", closefd=False)
        buffered = raw if unbuffered else io.BufferedWriter(raw)
        streams.append(io.TextIOWrapper(buffered, encoding=encoding, errors=errors,
                                        line_buffering=fd == 2 or raw.isatty(), write_through=unbuffered))
    sys.stdin, sys.stdout, sys.stderr = streams
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = streams


def _child(request: dict, fds: list[int]) -> None:
    """In the forked child: become the run, and never return."""
    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for name in os.listdir("/proc/self/fd"):  # as subprocess's close_fds: only 0, 1, 2 go on
            if int(name) > 2:
                try:
                    os.close(int(name))
                except OSError:
                    pass
        if request.get("new_session"):
            os.setsid()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.environ.clear()
        os.environ.update(request["env"])
        if request.get("cwd"):
            os.chdir(request["cwd"])
        _new_stdio(bool(request["env"].get("PYTHONUNBUFFERED")))
        import faulthandler

        if request["env"].get("PYTHONFAULTHANDLER"):
            faulthandler.enable()
        else:
            faulthandler.disable()
        sys.path[0] = os.getcwd()  # as python -m puts it
        sys.argv = ["-m", *request["args"]]
        import runpy

        try:
            runpy.run_module("td2048.cli", run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as e:
            if e.code is None:
                code = 0
            elif isinstance(e.code, int):
                code = e.code
            else:
                print(e.code, file=sys.stderr)
                code = 1
        except KeyboardInterrupt:
            import traceback

            traceback.print_exc()
            code = -signal.SIGINT
        except BaseException:
            import traceback

            traceback.print_exc()
            code = 1
        import atexit
        import threading

        threading._shutdown()  # as Python ends: non-daemon threads joined, then atexit, then the streams flushed
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        if code < 0:  # a KeyboardInterrupt that reached the top: Python ends by the signal
            signal.signal(-code, signal.SIG_DFL)
            os.kill(os.getpid(), -code)
        os._exit(code & 0xFF)


def serve(path: str) -> None:
    """Accept run requests on the Unix socket at path until stdin closes (the caller has ended)."""
    preload()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(sys.stdin, selectors.EVENT_READ, "stdin")
    print("ready", flush=True)
    while True:
        for key, _ in selector.select():
            if key.data == "stdin":
                if not os.read(sys.stdin.fileno(), 4096):
                    return
            elif key.data == "accept":
                connection, _ = listener.accept()
                selector.register(connection, selectors.EVENT_READ, ("request", connection))
            elif key.data[0] == "request":
                connection = key.data[1]
                selector.unregister(connection)
                request, fds = receive_message(connection, max_fds=3)
                if request is None:
                    connection.close()
                    continue
                pid = os.fork()
                if pid == 0:
                    listener.close()
                    connection.close()
                    _child(request, fds)
                for fd in fds:
                    os.close(fd)
                send_message(connection, {"pid": pid})
                watch = os.pidfd_open(pid)
                selector.register(watch, selectors.EVENT_READ, ("exit", connection, pid, watch))
            else:
                _, connection, pid, watch = key.data
                selector.unregister(watch)
                os.close(watch)
                _, status = os.waitpid(pid, 0)
                try:
                    send_message(connection, {"returncode": os.waitstatus_to_exitcode(status)})
                except OSError:
                    pass
                connection.close()


if __name__ == "__main__":
    serve(sys.argv[1])
