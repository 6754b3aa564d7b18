"""Load benchmark of ``td2048 serve``: requests per second and latency of ``POST /api/move`` by depth and
concurrent clients, errors counted, and the server's memory over a long run. Only 127.0.0.1.

The server is a real ``td2048 serve`` process; the clients are a bounded asyncio load generator in this process
(HTTP/1.1 keep-alive, one connection per client, each sending its next request when the last one is answered).
The boards are positions of a game the server's engine plays first (so searches see real positions).

    python benchmarks/bench_serve.py MODEL [--depths 1,2,3] [--clients 1,8,64] [--seconds 5] [--threads N]
                                     [--memory-requests 100000]

Prints one Markdown table (depth, clients, requests, requests/s, p50 and p99 latency in ms, errors) and the
server's resident memory before and after ``--memory-requests`` more requests (moves and games).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import time
import urllib.request

from td2048.models import shipped_model


def start_server(model: str, threads: int, max_depth: int) -> tuple[subprocess.Popen, str]:
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "td2048.cli", "serve", model, "--port", "0", "--threads",
                                str(threads), "--max-depth", str(max_depth), "--queue", "256"],
                               stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    banner = process.stdout.readline()
    if not banner.startswith("td2048 serve: http://127.0.0.1:"):
        process.kill()
        raise SystemExit(f"the server did not start: {banner!r}")
    url = banner.split()[2].rstrip("/")
    call(url, "POST", "/api/move", {"board": [2, 2] + [0] * 14})
    print(f"# {banner.strip()}\n# start-up to the first answer: {time.perf_counter() - started:.2f} s", flush=True)
    return process, url


def call(url: str, method: str, path: str, body=None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url + path, data=data, method=method)
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def positions(url: str, count: int = 400) -> list[list[int]]:
    """Boards of games the engine plays at depth 1 (every position of the first games, up to ``count``)."""
    boards = []
    seed = 1
    while len(boards) < count:
        game = call(url, "POST", "/api/games", {"seed": seed})
        boards.append(game["board"])
        while len(boards) < count:
            game = call(url, "POST", f"/api/games/{game['id']}/moves", {"engine": True, "depth": 1})
            if game["over"]:
                break
            boards.append(game["board"])
        seed += 1
    return boards


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def request_bytes(host: str, path: str, body: dict) -> bytes:
    payload = json.dumps(body, separators=(",", ":")).encode()
    return (f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(payload)}\r\n\r\n").encode() + payload


async def exchange(reader, writer, request: bytes) -> tuple[int, bytes]:
    """One request on a kept-alive connection: (status, body)."""
    writer.write(request)
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    return status, await reader.readexactly(length)


async def load(url: str, requests: list[bytes], clients: int, seconds: float | None = None,
               total: int | None = None) -> tuple[list[float], int, float]:
    """``clients`` connections sending ``requests`` in turn, for ``seconds`` or ``total`` requests in all:
    (latencies in seconds, errors, wall seconds)."""
    host, port = url.removeprefix("http://").split(":")
    latencies, errors, sent = [], 0, 0
    start = time.perf_counter()
    deadline = None if seconds is None else start + seconds

    async def client(k):
        nonlocal errors, sent
        reader, writer = await asyncio.open_connection(host, int(port))
        i = k
        try:
            while (deadline is None or time.perf_counter() < deadline) and (total is None or sent < total):
                sent += 1
                t = time.perf_counter()
                try:
                    status, _ = await exchange(reader, writer, requests[i % len(requests)])
                except (OSError, asyncio.IncompleteReadError, ValueError):
                    errors += 1
                    writer.close()
                    reader, writer = await asyncio.open_connection(host, int(port))
                    continue
                latencies.append(time.perf_counter() - t)
                errors += status != 200
                i += clients
        finally:
            writer.close()

    await asyncio.gather(*(client(k) for k in range(clients)))
    return latencies, errors, time.perf_counter() - start


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] if ordered else float("nan")


async def games_load(url: str, requests: int, clients: int) -> int:
    """``requests`` game requests (a new game, then engine moves at depth 1), ``clients`` at once: errors."""
    host, port = url.removeprefix("http://").split(":")
    errors, sent = 0, 0

    async def client():
        nonlocal errors, sent
        reader, writer = await asyncio.open_connection(host, int(port))
        game = None
        while sent < requests:
            sent += 1
            if game is None:
                status, body = await exchange(reader, writer, request_bytes(host, "/api/games", {}))
            else:
                status, body = await exchange(reader, writer, request_bytes(
                    host, f"/api/games/{game}/moves", {"engine": True, "depth": 1}))
            errors += status not in (200, 201)
            answer = json.loads(body)
            game = None if status not in (200, 201) or answer.get("over") or answer.get("moves", 0) >= 20 \
                else answer["id"]
        writer.close()

    await asyncio.gather(*(client() for _ in range(clients)))
    return errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", nargs="?", default=str(shipped_model()))
    parser.add_argument("--depths", default="1,2,3")
    parser.add_argument("--clients", default="1,8,64")
    parser.add_argument("--seconds", type=float, default=5.0, help="of load per row (default 5)")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                        help="the server's search threads (default: the CPUs)")
    parser.add_argument("--memory-requests", type=int, default=100_000,
                        help="requests of the memory run: 9 in 10 /api/move at depth 1, 1 in 10 game requests")
    args = parser.parse_args()
    depths = [int(d) for d in args.depths.split(",")]
    process, url = start_server(args.model, args.threads, max(depths))
    host = url.removeprefix("http://")
    try:
        boards = positions(url)
        print(f"# {platform.node()}, {os.cpu_count()} CPUs, {platform.processor() or platform.machine()}; server "
              f"threads {args.threads}; {len(boards)} positions; {args.seconds:g} s per row", flush=True)
        print("| depth | clients | requests | requests/s | p50 ms | p99 ms | errors |")
        print("|---|---|---|---|---|---|---|", flush=True)
        for depth in depths:
            requests = [request_bytes(host, "/api/move", {"board": b, "depth": depth}) for b in boards]
            asyncio.run(load(url, requests, 4, seconds=0.5))  # the workers' agents of this depth: made once
            for clients in [int(c) for c in args.clients.split(",")]:
                latencies, errors, wall = asyncio.run(load(url, requests, clients, seconds=args.seconds))
                print(f"| {depth} | {clients} | {len(latencies):,} | {len(latencies) / wall:,.0f} | "
                      f"{1000 * percentile(latencies, 50):.2f} | {1000 * percentile(latencies, 99):.2f} | {errors} |",
                      flush=True)
        if args.memory_requests:
            requests = [request_bytes(host, "/api/move", {"board": b, "depth": 1}) for b in boards]
            before = rss_kib(process.pid)
            started = time.perf_counter()
            moves = args.memory_requests * 9 // 10
            latencies, errors, _ = asyncio.run(load(url, requests, 8, total=moves))
            errors += asyncio.run(games_load(url, args.memory_requests - moves, 8))
            after = rss_kib(process.pid)
            print(f"# memory: {before / 1024:.1f} MiB before, {after / 1024:.1f} MiB after "
                  f"{len(latencies) + args.memory_requests - moves:,} requests ({moves:,} moves at depth 1, "
                  f"{args.memory_requests - moves:,} game requests) in {time.perf_counter() - started:.0f} s; "
                  f"{errors} errors; games kept: {call(url, 'GET', '/api/model')['games']['kept']}", flush=True)
    finally:
        process.terminate()
        process.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
