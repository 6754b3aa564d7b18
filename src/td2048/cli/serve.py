"""``td2048 serve``: a model's engine over HTTP, a JSON API and a web app, in one process."""

from __future__ import annotations

import argparse
import socket
import sys
import threading
import time

from td2048.cli.options import nonnegative_int_arg, positive_float_arg, positive_int_arg
from td2048.errors import TD2048Error
from td2048.search_settings import MAX_DEPTH
from td2048.server import DEFAULT_MAX_AGE, DEFAULT_MAX_GAMES, DEFAULT_QUEUE

PREPARING_NOTICE_SECONDS = 2.0  # longer than loading compiled kernels takes: the notice means a compile
DEFAULT_DEPTH, DEFAULT_MAX_DEPTH = 2, 4

HELP = "serve a model: a JSON API and a web app to play with hints, watch it play and analyse positions"
DESCRIPTION = f"""\
Start an HTTP server (uvicorn) for a model and print its URL (the first run of a network on a machine
compiles its search kernels first, and says so on stderr). The page at / plays 2048 (or 2584)
on the model's board (4x4, 3x3, 2x4, ...) with the keyboard or by swiping, with hints, lets the
engine play live, analyses positions set by clicking, and replays record files (4x4 games). The
JSON API (its OpenAPI schema at /openapi.json): POST /api/analyze and /api/move take
{{"board": [a tile value per cell: 16 on 4x4, 9 on 3x3], "depth": N}} and answer as td2048 analyze
--json does; /api/games runs games (moves by the player or the engine, undo, the record); GET
/api/model tells the model, its board and this server's limits.

MODEL left out: the model that ships with td2048 (a 4x5 network for 2048), or with --solution no model.

--solution FILE (td2048 solve --out FILE) serves a solved board: the hints and analyses give every move's exact
value (its expected score under perfect play after it) and the perfect move, beside the model's values, and
each move of a game says how much expected score it lost. With a MODEL the solution must be of its board and
game; without one the board and game are the solution's and the engine plays perfectly (no search depth).
A solution of another board or game, or a truncated or altered file, is refused before the server starts.

The server answers 127.0.0.1 only unless --host says otherwise (0.0.0.0: every interface, reachable from the
network).
--port 0 takes a free port. At most --threads searches run at once and --queue more wait; a request
past that gets 503 at once. Depths of requests are 1 to --max-depth (at most {MAX_DEPTH}); --depth is
the depth of a request that names none. Games are kept in memory, at most --max-games, each for
--max-age seconds after its last request. Ctrl-C stops the server.

Needs the serve extra: pip install 'td2048[serve]'.
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", nargs="?", default=None,
                   help="a model file (.td2048 or .td2048.xz; default: the model that ships with td2048, or none "
                        "with --solution)")
    p.add_argument("--solution", default=None, metavar="FILE",
                   help="a solution file of the board (td2048 solve --out): exact values, the perfect move and what "
                        "each move lost; without MODEL the engine plays perfectly on the solution's board")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0: every interface)")
    p.add_argument("--port", type=nonnegative_int_arg, default=8048, help="port (default 8048; 0: a free port)")
    p.add_argument("--depth", type=positive_int_arg, default=None, metavar="N",
                   help=f"search depth of a request that names none (default {DEFAULT_DEPTH})")
    p.add_argument("--max-depth", type=positive_int_arg, default=None, metavar="N",
                   help=f"the deepest search a request may ask for (default {DEFAULT_MAX_DEPTH}, at most {MAX_DEPTH})")
    p.add_argument("--threads", type=positive_int_arg, default=None, metavar="N",
                   help="searches that run at once (default: the CPUs, at most 4)")
    p.add_argument("--queue", type=nonnegative_int_arg, default=DEFAULT_QUEUE, metavar="N",
                   help=f"searches that may wait for a thread; past that, 503 at once (default {DEFAULT_QUEUE})")
    p.add_argument("--max-games", type=positive_int_arg, default=DEFAULT_MAX_GAMES, metavar="N",
                   help=f"games kept in memory; more drops the least recently used (default {DEFAULT_MAX_GAMES})")
    p.add_argument("--max-age", type=positive_float_arg, default=DEFAULT_MAX_AGE, metavar="SECONDS",
                   help=f"seconds a game is kept after its last request (default {DEFAULT_MAX_AGE:g})")


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket on (host, port): the port is taken here, so --port 0 prints the one it got."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise TD2048Error(f"--host {host!r}: {e.strerror}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as e:
        sock.close()
        raise TD2048Error(f"cannot listen on {host}:{port}: {e.strerror}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def run(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    try:
        import uvicorn

        from td2048.server.app import create_app
    except ImportError as e:
        raise TD2048Error(f"td2048 serve needs the serve extra ({e.name} is missing): "
                          "pip install 'td2048[serve]'") from None
    from td2048.io.model import load_model
    from td2048.models import model_or_shipped
    from td2048.server.engine import Engine, default_threads
    from td2048.server.games import GameStore

    network = header = path = solution = None
    if args.solution is None or args.model is not None:
        path = model_or_shipped(args.model)
        network, header = load_model(path)
    elif args.depth is not None or args.max_depth is not None:
        raise TD2048Error("--depth and --max-depth set the model's search: without a MODEL the engine plays "
                          "perfectly from the solution, with no search")
    if args.solution is not None:
        from td2048.solve import load_solution

        solution = load_solution(args.solution, verify=False)  # its header: the board and game
        if network is not None and (solution.board != network.board or solution.game != network.game):
            raise TD2048Error(f"{args.solution} solves {solution.game} on {solution.board.name}, but the model plays "
                              f"{network.game} on {network.board.name}")
        solution = load_solution(args.solution)  # and its checksum: a truncated or altered file is refused
    engine = Engine(network, header, path, args.depth or DEFAULT_DEPTH, args.max_depth or DEFAULT_MAX_DEPTH,
                    args.threads or default_threads(), args.queue, solution=solution, solution_name=args.solution)
    store = GameStore(network if network is not None else solution, args.max_games, args.max_age,
                      exact=solution is not None)
    local = args.host in ("127.0.0.1", "localhost", "::1")
    app = create_app(engine, store, local=local)
    # loading compiled kernels takes a moment, compiling them (the first run of a network on a machine) tens of
    # seconds with nothing else shown: a line once the wait is longer than a load
    what = (f"the engine's kernels for {network.spec.label}, compiled once per network on a machine"
            if network is not None else "the solution's look-ups, compiled once on a machine")
    notice = threading.Timer(PREPARING_NOTICE_SECONDS, print, args=(
        f"td2048 serve: preparing {what} (the first start takes about 15 s) ...",),
        kwargs={"file": sys.stderr, "flush": True})
    notice.start()
    try:
        engine.warm()
    finally:
        notice.cancel()
    sock = _listen(args.host, args.port)
    port = sock.getsockname()[1]
    shown = args.host if local else "127.0.0.1"
    url = f"http://{'[' + shown + ']' if ':' in shown else shown}:{port}/"
    board = "" if engine.shape.full else f" on the {engine.shape} board"
    if network is None:
        playing = (f"perfect play from {engine.solution_name}: {solution.game}{board}, {solution.positions:,} "
                   f"positions, optimal expected score {solution.expected_score:,.2f}")
    else:
        solved = "" if solution is None else f"; exact values from {engine.solution_name}"
        playing = (f"{engine.name}: {network.spec.label}, {network.game}{board}; depth {engine.depth}, at most "
                   f"{engine.max_depth}{solved}")
    print(f"td2048 serve: {url} ({playing}; {engine.threads} search thread{'s' if engine.threads > 1 else ''}, "
          f"{engine.queue} waiting; ready in {time.perf_counter() - started:.1f} s)", flush=True)
    if not local:
        print(f"td2048 serve: listening on {args.host}: the engine is reachable from the network, by anyone who "
              f"can reach port {port}", flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, server_header=False,
                            timeout_graceful_shutdown=2)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:  # Ctrl-C is how a server stops: uvicorn has shut down gracefully, then raised it
        pass
    finally:
        engine.close()
        sock.close()
    print("td2048 serve: stopped", file=sys.stderr, flush=True)
    return 0
