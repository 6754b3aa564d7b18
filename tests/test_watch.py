"""td2048 watch: plain output through a pipe, the live board and its keys in a real pseudo-terminal."""

import contextlib
import ctypes
import fcntl
import io
import json
import os
import platform
import re
import select
import signal
import struct
import termios
import time

import numpy as np
import pytest
from commands import assert_one_line_error, start_td2048, td2048
from rich.console import Console

from td2048.cli.terminal import KEYS, VALUES_HEADING, view
from td2048.games.board import Board
from td2048.games.wide import wide_from_codes
from td2048.io.model import load_model
from td2048.play import Agent, parse_board

SUMMARY = re.compile(r"# (game over|stopped|interrupted): score (\d+), (\d+) moves, largest tile (\d+), ")


@pytest.fixture(scope="module")
def model(tmp_path_factory, cli_env):
    out = tmp_path_factory.mktemp("watch") / "run"
    r = td2048("train", "--network", "2x4", "--episodes", 200, "--seed", 1, "--out", out, "--quiet", env=cli_env)
    assert r.returncode == 0, r.stderr
    return out / "model.td2048"


def test_plain_output_is_the_game_of_eval(model, cli_env):
    r = td2048("watch", model, "--seed", 1, "--delay", 0, env=cli_env)
    assert r.returncode == 0, r.stderr
    assert "\x1b" not in r.stdout
    lines = r.stdout.splitlines()
    moves = [line.split() for line in lines[2:-5]]  # after the title and the columns' header
    board = [line.split() for line in lines[-5:-1]]
    assert [int(m[0]) for m in moves] == list(range(1, len(moves) + 1))
    assert all(m[1] in ("up", "right", "down", "left") and m[4 + ("up", "right", "down", "left").index(m[1])]
               != "illegal" for m in moves)
    ending, score, count, largest = SUMMARY.search(r.stdout).groups()
    assert ending == "game over" and int(count) == len(moves)
    assert int(score) == sum(int(m[2]) for m in moves) == int(moves[-1][3])
    assert len(board) == 4 and max(int(t) for row in board for t in row if t != ".") == int(largest)
    played = json.loads(td2048("eval", model, "--games", 1, "--seed", 1, "--json", env=cli_env).stdout)
    assert (played["avg"], played["moves"]) == (int(score), len(moves))


def test_bad_input_is_one_line(model, tmp_path, cli_env):
    assert_one_line_error(td2048("watch", tmp_path / "missing.td2048", env=cli_env), "no such file")
    assert_one_line_error(td2048("watch", model, "--depth", 0, env=cli_env), "--depth")
    assert_one_line_error(td2048("watch", model, "--delay", "-1", env=cli_env), "--delay")


def _read_until(master, pattern: bytes, seen: bytearray) -> None:
    deadline = time.monotonic() + 300  # generous: only a hung program gets near it
    while pattern not in seen:
        assert time.monotonic() < deadline, bytes(seen[-2000:])
        if select.select([master], [], [], 1)[0]:
            seen += os.read(master, 65536)


@contextlib.contextmanager
def _watch_in_pty(model, cli_env, *args):
    """The command on a pseudo-terminal of 100 x 30 (stdin, stdout and stderr), once its board is up;
    killed at the end whatever happened, so that a failed test leaves nothing waiting for keys."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    before = termios.tcgetattr(slave)
    proc = start_td2048("watch", model, *args, stdin=slave, stdout=slave, stderr=slave,
                        env={**cli_env, "TERM": "xterm-256color"})
    try:
        seen = bytearray()
        _read_until(master, b"playing", seen)
        yield proc, master, slave, before, seen
    finally:
        proc.kill()
        proc.wait()
        os.close(master)
        os.close(slave)


def _finish(proc, master, slave, before, seen) -> str:
    """Read to the end (the program blocks on a full terminal), check the terminal was restored."""
    deadline = time.monotonic() + 300
    while proc.poll() is None or select.select([master], [], [], 0.2)[0]:
        assert time.monotonic() < deadline, bytes(seen[-2000:])
        if select.select([master], [], [], 0.2)[0]:
            seen += os.read(master, 65536)
    assert termios.tcgetattr(slave) == before  # echo and line mode back as they were
    return seen.decode(errors="replace")


def test_keys_in_a_terminal(model, cli_env):
    """Space pauses; n and the right arrow each play one move; q quits with the summary."""
    with _watch_in_pty(model, cli_env, "--seed", 1, "--delay", 1000) as (proc, master, slave, before, seen):
        os.write(master, b" ")
        _read_until(master, b"paused", seen)
        os.write(master, b"n\x1b[Cq")
        out = _finish(proc, master, slave, before, seen)
    assert proc.returncode == 0, out
    assert "\x1b[" in out and "Traceback" not in out
    ending, _, count, _ = SUMMARY.search(out).groups()
    assert (ending, count) == ("stopped", "2")


def test_interrupt_restores_the_terminal(model, cli_env):
    with _watch_in_pty(model, cli_env, "--seed", 1, "--delay", 1000) as (proc, master, slave, before, seen):
        proc.send_signal(signal.SIGINT)
        out = _finish(proc, master, slave, before, seen)
    assert proc.returncode == 130 and SUMMARY.search(out).group(1) == "interrupted", out


def test_ctrl_c_ends_a_long_wait_whichever_thread_gets_it(model, cli_env):
    """The kernel hands a process's SIGINT to any of its threads (NumPy's BLAS starts some): sent to one that
    is not the main thread (tgkill), it still ends a wait of --delay 1000 at once, as Ctrl-C."""
    env = {**cli_env, "OPENBLAS_NUM_THREADS": "2"}  # at least one thread besides the main one, on any machine
    with _watch_in_pty(model, env, "--seed", 1, "--delay", 1000) as (proc, master, slave, before, seen):
        others = sorted(int(t) for t in os.listdir(f"/proc/{proc.pid}/task") if int(t) != proc.pid)
        assert others, "no thread besides the main one"
        tgkill = {"x86_64": 234, "aarch64": 131}[platform.machine()]
        assert ctypes.CDLL(None, use_errno=True).syscall(tgkill, proc.pid, others[0], signal.SIGINT) == 0
        out = _finish(proc, master, slave, before, seen)
    assert proc.returncode == 130 and SUMMARY.search(out).group(1) == "interrupted", out


def test_view_shows_2584_tiles_by_value():
    board = wide_from_codes([17, 16, 1, 0] + [0] * 12)  # 2584, 1597, 1
    console = Console(file=io.StringIO(), width=100, color_system=None)
    console.print(view("t", board, "2584", 4181, 12, 3, 8, np.array([1.5, 2.5, np.nan, 0.0]), "paused", 1))
    text = console.file.getvalue()
    assert all(tile in text for tile in ("2584", "1597", "4,181", "illegal", "last move  left +8", VALUES_HEADING,
                                         "> right", "paused"))


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _last_screen(seen: bytearray, rows: int = 4, cols: int = 4) -> dict:
    """The last screen drawn (its state "paused"): the board (its tile values, row-major), the values beside it,
    the move marked as the next one and the last move played."""
    text = ANSI.sub("", seen.decode(errors="replace")).replace("\r", "")
    end = text.rindex(KEYS)
    start = text.rfind(KEYS, 0, end)
    screen = text[start + len(KEYS) if start >= 0 else 0:end]  # from the end of the screen before
    assert "paused" in screen, screen
    tile = re.compile(r"\.|\d+")
    lines = [words[:cols] for words in (line.split() for line in screen.splitlines())
             if len(words) >= cols and all(tile.fullmatch(w) for w in words[:cols])
             and (len(words) == cols or not tile.fullmatch(words[cols]))]
    assert len(lines) == rows and VALUES_HEADING in screen, screen
    values = {name: value for _, name, value in re.findall(r"(> |  )(up|right|down|left) +(illegal|-?\d+\.\d)\b",
                                                           screen)}
    marked = re.findall(r"> (up|right|down|left) +-?\d+\.\d +next", screen)
    assert len(values) == 4 and len(marked) == 1, screen
    return {"board": [0 if t == "." else int(t) for row in lines for t in row], "values": values, "next": marked[0],
            "last": re.search(r"last move +(up|right|down|left|-)", screen).group(1)}


def _read_paused_screen(master, seen: bytearray, count: int, rows: int = 4, cols: int = 4) -> dict:
    """Read until the count-th screen paused is whole (its keys line drawn): that screen (:func:`_last_screen`)."""
    state = b"\x1b[7mpaused"  # the state, in reverse video (the keys line says "paused" too)
    deadline = time.monotonic() + 300
    while seen.count(state) < count or KEYS.encode() not in seen[seen.rindex(state):]:
        assert time.monotonic() < deadline, bytes(seen[-2000:])
        if select.select([master], [], [], 1)[0]:
            seen += os.read(master, 65536)
    return _last_screen(seen, rows, cols)


def test_the_values_shown_are_those_of_the_board_on_screen(model, cli_env):
    """Beside each board: the values of the moves from that board (as the engine computes them for it, through
    the Python API), the move it plays next marked; one move on, that move is the last move."""
    agent = Agent(load_model(model)[0], depth=2)

    def engine_values(board):
        values = agent.analyze(parse_board(",".join(map(str, board))))
        return {name: "illegal" if v is None else f"{v:.1f}" for name, v in values.items()}

    with _watch_in_pty(model, cli_env, "--seed", 1, "--delay", 1000, "--depth", 2) as (proc, master, slave, before,
                                                                                      seen):
        os.write(master, b" ")
        first = _read_paused_screen(master, seen, 1)
        os.write(master, b"n")
        second = _read_paused_screen(master, seen, 2)
        os.write(master, b"q")
        out = _finish(proc, master, slave, before, seen)
    assert proc.returncode == 0 and SUMMARY.search(out).group(3) == "1", out
    assert sum(t > 0 for t in first["board"]) == 2 and first["last"] == "-"
    for screen in (first, second):
        assert screen["values"] == engine_values(screen["board"]), screen
        legal = {name: float(v) for name, v in screen["values"].items() if v != "illegal"}
        assert legal[screen["next"]] == max(legal.values())
    assert second["last"] == first["next"] and second["board"] != first["board"]


@pytest.fixture(scope="module")
def model_3x3(tmp_path_factory, cli_env):
    out = tmp_path_factory.mktemp("watch3x3") / "run"
    r = td2048("train", "--board", "3x3", "--network", "3x3", "--episodes", 300, "--seed", 1, "--out", out, "--quiet",
               env=cli_env)
    assert r.returncode == 0, r.stderr
    return out / "model.td2048"


def test_a_3x3_model_plays_on_a_3x3_grid(model_3x3, cli_env):
    """Through a pipe, the final board is 3 lines of 3; on a terminal, the board drawn is 3 x 3 and the values
    beside it are the engine's for that board."""
    r = td2048("watch", model_3x3, "--seed", 1, env=cli_env)
    assert r.returncode == 0, r.stderr
    board = [line.split() for line in r.stdout.splitlines()[-4:-1]]
    assert [len(row) for row in board] == [3, 3, 3] and r.stdout.splitlines()[-5].split()[0].isdigit()
    assert max(int(t) for row in board for t in row if t != ".") == int(SUMMARY.search(r.stdout).group(4))
    agent = Agent(load_model(model_3x3)[0])
    with _watch_in_pty(model_3x3, cli_env, "--seed", 1, "--delay", 1000) as (proc, master, slave, before, seen):
        os.write(master, b" ")
        screen = _read_paused_screen(master, seen, 1, rows=3, cols=3)
        os.write(master, b"q")
        out = _finish(proc, master, slave, before, seen)
    assert proc.returncode == 0 and SUMMARY.search(out).group(1) == "stopped", out
    tiles = screen["board"]
    assert sum(t > 0 for t in tiles) == 2
    values = agent.analyze(Board.from_tiles([tiles[0:3], tiles[3:6], tiles[6:9]]))
    assert screen["values"] == {name: "illegal" if v is None else f"{v:.1f}" for name, v in values.items()}
