"""The HTTP API and the web app of ``td2048 serve``: a FastAPI application over an :class:`Engine`.

Every answer is JSON except the page (``/``) and a game's record (text). Every refusal is a 4xx with
one line of JSON, ``{"error": "..."}``; 503 when the searches are saturated (see
:mod:`td2048.server.engine`). On a solved board (``--solution``) the analyses and the games' moves carry
the exact values too, and each move what it lost against perfect play. No request names a file: the page
is assembled from the package's own files when the app is made, and nothing else of the machine is read or
written.
"""

import asyncio
import json
from importlib import resources
from typing import Annotated, Literal

from fastapi import Body, FastAPI, Path, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse
from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema
from starlette.exceptions import HTTPException as StarletteHTTPException

from td2048 import TD2048Error
from td2048.games.game2048 import MOVE_NAMES
from td2048.io.replay_html import VIEWER_HTML, palette_data, replay_text, viewer_assets
from td2048.server.engine import NO_DEPTH, Busy, Conflict, Engine, Gone, NotFound, best_move
from td2048.server.games import MAX_SEED, GameStore
from td2048.solve.policy import RTOL
from td2048.version import __version__

MAX_BODY = 64 * 1024  # bytes of a request's body, past which it gets 413
MAX_REPLAY_BODY = 4 * 1024 * 1024  # of a record file sent to /api/replay
# a refused request's body is read and dropped after the refusal, up to these bytes and seconds, so that a
# client that sends all of its body before it reads the answer gets it (not a connection reset)
DRAIN_BODY = 32 * 1024 * 1024
DRAIN_SECONDS = 30.0
REPLAY_MAX_GAMES = 100
_STATUS = {Busy: 503, NotFound: 404, Gone: 410, Conflict: 409}
_SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    # the page loads nothing from anywhere: its script and style are inline, it talks to this server only
    (b"content-security-policy", b"default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                                 b"connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'"),
]


class Error(BaseModel):
    """Every refusal: one line."""

    error: str = Field(description="what was wrong, in one line")


class Values(BaseModel):
    """Each move's value: r + the value of its afterstate at the search depth; null for an illegal move."""

    up: float | None
    right: float | None
    down: float | None
    left: float | None


class Exact(BaseModel):
    """A position's exact values on a solved board (a server with --solution)."""

    moves: Values = Field(description="each move's Q*: its reward plus the expected score under perfect play "
                                      "after it; null for an illegal move")
    best: Literal["up", "right", "down", "left"] = Field(
        description="the perfect move: the largest Q* (the first in the order up, right, down, left on a tie)")
    value: float = Field(description="the position's expected score under perfect play: the perfect move's Q*")


class Analysis(BaseModel):
    """What ``td2048 analyze --json`` prints for the board and depth; on a solved board, the exact values too."""

    board: list[int] = Field(description="the board, a tile value per cell (16 on 4x4; GET /api/model's rows x "
                                         "cols), row-major, 0 empty")
    depth: int | None = Field(description="the search depth; null on a server without a model (perfect play)")
    moves: Values | None = Field(description="each move's value; without a model the exact ones, null for a board "
                                             "that is not reachable")
    best: Literal["up", "right", "down", "left"] | None = Field(
        description="the legal move of the largest value; without a model the perfect move, null for a board that "
                    "is not reachable")
    reachable: bool | None = Field(None, description="with --solution only: whether the start of the game reaches "
                                                     "the board (the solution holds every board it reaches)")
    exact: Exact | None = Field(None, description="with --solution only: the exact values; null for a board that is "
                                                  "not reachable")


class MoveAnswer(BaseModel):
    """The engine's move for a board and its value."""

    move: Literal["up", "right", "down", "left"]
    value: float


class Placed(BaseModel):
    """A new tile."""

    cell: int = Field(ge=0, le=15, description="0..15 on 4x4 (0..rows x cols - 1), row-major, 0 top-left")
    tile: int


class GameSummary(BaseModel):
    """A game now."""

    id: str
    board: list[int]
    score: int
    moves: int = Field(description="moves played")
    max_tile: int
    legal: list[Literal["up", "right", "down", "left"]] = Field(
        description="the moves that change the board, in the order up, right, down, left (none once it is over)")
    over: bool
    lost: float | None = Field(None, description="with --solution only: the expected score the game's moves lost "
                                                 "against perfect play, in all")


class GameState(GameSummary):
    """A game so far: enough to replay it (the placements, or the seed, with the moves)."""

    game: Literal["2048", "2584"]
    seed: int
    history: list[Literal["up", "right", "down", "left"]] = Field(description="every move, in order")
    placed: list[Placed] = Field(description="every new tile: two at the start, then one after each move")


class MoveResult(GameSummary):
    """A move in a game: the move, its reward, the new tile after it, and the game now."""

    move: Literal["up", "right", "down", "left"]
    reward: int
    placed: Placed
    values: Values | None = Field(None, description="the engine's values of the four moves (engine moves only)")
    depth: int | None = Field(None, description="the engine's search depth (engine moves only; null without a "
                                                "model)")
    exact: Exact | None = Field(None, description="with --solution only: the exact values of the board the move "
                                                  "was played on")
    loss: float | None = Field(None, description="with --solution only: the expected score the move lost, Q*(the "
                                                 "perfect move) - Q*(this move); 0 for a perfect move")


_STRICT = ConfigDict(strict=True, extra="forbid")
Direction = Literal["up", "right", "down", "left"]


def _request_models(engine: Engine):
    """Request bodies whose schema holds this server's tiles, board and depths."""
    cells = engine.shape.n_cells
    where = "" if engine.shape.full else f" (the {engine.shape} board)"
    Tile = Annotated[int, WithJsonSchema({"type": "integer", "enum": engine.tiles})]  # noqa: N806
    # without a model the engine is perfect play: no depth (a request that names one is refused)
    Depth = Annotated[int, Field(ge=1, le=engine.max_depth)] | None if engine.network is not None else None  # noqa: N806

    class Position(BaseModel):
        """A board of the model's game and a search depth (the server's when left out)."""

        model_config = _STRICT
        board: Annotated[list[Tile], Field(min_length=cells, max_length=cells,
                                           description=f"{cells} tile values{where}, row-major, 0 empty")]
        depth: Depth = None

    class NewGame(BaseModel):
        """A game's seed (drawn when left out): the same seed and moves give the same game."""

        model_config = _STRICT
        seed: Annotated[int, Field(ge=0, le=MAX_SEED)] | None = None

    class PlayerMove(BaseModel):
        """The player's move."""

        model_config = _STRICT
        move: Direction

    class EngineMove(BaseModel):
        """The engine's move, at a depth (the server's when left out)."""

        model_config = _STRICT
        engine: Literal[True]
        depth: Depth = None

    class Replay(BaseModel):
        """A record file's text (the first 100 games are replayed) and its game (detected when left out)."""

        model_config = _STRICT
        records: Annotated[str, Field(max_length=MAX_REPLAY_BODY)]
        game: Literal["2048", "2584"] | None = None

    return Position, NewGame, PlayerMove, EngineMove, Replay


def _one_line(error: dict) -> str:
    if tuple(error.get("loc", ())) == ("body",) and error.get("type") == "missing":
        return "a JSON body is required"
    where = ".".join(str(part) for part in error.get("loc", ())[1:] if part not in ("PlayerMove", "EngineMove"))
    message = str(error.get("msg", "invalid")).replace("\n", " ")
    return f"{where}: {message}" if where else message


def _error(status: int, message: str, headers: dict | None = None) -> JSONResponse:
    return JSONResponse({"error": " ".join(str(message).split())[:500]}, status, headers=headers)


async def _refuse(response: JSONResponse, scope, receive, send, read: int = 0) -> None:
    """Send a refusal before the request's body is read, then read and drop the rest of the body (up to
    ``DRAIN_BODY`` bytes in all, ``DRAIN_SECONDS``) before the connection closes.

    The answer goes out at once, for a client that reads it while it sends; the body is read after it since a
    client that sends its whole body first (urllib, requests) would get a connection reset, not the answer,
    if the server closed with the body unread. The last empty part of the answer, sent once the body is read,
    tells the server that the request is done; ``Connection: close`` ends the connection then.
    """
    await send({"type": "http.response.start", "status": response.status_code,
                "headers": [*response.raw_headers, (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": response.body, "more_body": True})
    headers = dict(scope["headers"])
    length = headers.get(b"content-length", b"")
    # a client that waits for 100-continue sends no body now; a body past the bound would be cut off anyway
    if headers.get(b"expect", b"").lower() != b"100-continue" and not (length.isdigit() and int(length) > DRAIN_BODY):

        async def drain(read):
            while read < DRAIN_BODY:
                message = await receive()
                if message["type"] != "http.request" or not message.get("more_body", False):
                    return
                read += len(message.get("body", b""))

        try:
            await asyncio.wait_for(drain(read), DRAIN_SECONDS)
        except TimeoutError:
            pass
    await send({"type": "http.response.body", "body": b"", "more_body": False})


class Guard:
    """ASGI middleware: bodies past their limit get 413 before the app reads them; on a local server, a
    Host header that is not this machine gets 400 (no other site's page can reach the engine through the
    browser: DNS rebinding); every answer carries the security headers. A refused request's body is read
    and dropped after the refusal (:func:`_refuse`), so that every client gets the answer."""

    def __init__(self, app, local: bool):
        self.app, self.local = app, local

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_secure(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *_SECURITY_HEADERS]}
            await send(message)

        headers = dict(scope["headers"])
        if self.local:
            host = headers.get(b"host", b"").decode("latin-1").rsplit(":", 1)[0].strip("[]").lower()
            if host not in ("127.0.0.1", "localhost", "::1"):
                return await _refuse(_error(400, f"Host {host[:60]!r} is not this machine: the server answers "
                                            "127.0.0.1 and localhost only"), scope, receive, send_secure)
        limit = MAX_REPLAY_BODY + 4096 if scope["path"] == "/api/replay" else MAX_BODY
        too_large = _error(413, f"the body is over {limit // 1024} KiB")
        length = headers.get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > limit):
            return await _refuse(too_large if length.isdigit() else _error(400, "bad Content-Length"),
                                 scope, receive, send_secure)
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = message.get("more_body", False)
            if size > limit:
                if not more:
                    return await too_large(scope, receive, send_secure)
                return await _refuse(too_large, scope, receive, send_secure, size)
        body, replayed = b"".join(chunks), False
        if scope["path"].startswith("/api/") and scope["method"] == "POST":  # every body is read as JSON, whatever
            scope = {**scope, "headers": [(k, v) for k, v in scope["headers"] if k != b"content-type"]  # it says
                     + [(b"content-type", b"application/json")]}

        async def replay():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send_secure)


def create_app(engine: Engine, store: GameStore, local: bool = True) -> FastAPI:
    """The server's application: the JSON API, the page, the error handling.

    Parameters
    ----------
    engine : Engine
        The model and its searches.
    store : GameStore
        The games the server runs.
    local : bool
        Answer only requests addressed to this machine (127.0.0.1, localhost): the default, off when the
        server listens on other interfaces.

    Returns
    -------
    fastapi.FastAPI
        The ASGI application (uvicorn runs it).
    """
    Position, NewGame, PlayerMove, EngineMove, Replay = _request_models(engine)  # noqa: N806
    app = FastAPI(title="td2048", version=__version__, docs_url=None, redoc_url=None,
                  description="The engine of a td2048 model: position analysis, games, the web app. Every refusal "
                              "is a 4xx with {\"error\": one line}; 503 when the searches are saturated.")
    refusals = {code: {"model": Error} for code in (400, 413, 422, 503)}
    game_refusals = {**refusals, **{code: {"model": Error} for code in (404, 409, 410)}}
    page = _page(engine)

    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, exc: RequestValidationError):
        errors = exc.errors()
        if any(e.get("type") == "json_invalid" for e in errors):
            return _error(400, "the body is not JSON")
        if not errors:
            return _error(422, "invalid request")
        # the most telling error first: a value given but wrong, then a key not allowed, then a key missing
        error = min(errors, key=lambda e: {"missing": 2, "extra_forbidden": 1}.get(e.get("type"), 0))
        if tuple(error.get("loc", ())) == ("body", "board") and error.get("type") in ("too_short", "too_long"):
            shape = engine.shape
            return _error(422, f"board: this server plays on the {shape} board, {shape.n_cells} tile values "
                               f"(row-major, 0 for empty), not {len(error.get('input', ()))}")
        if engine.network is None and any(e.get("loc", ())[-1:] == ("depth",) and e.get("type") == "none_required"
                                          for e in errors):
            return _error(422, "depth: " + NO_DEPTH)
        if any(part in ("PlayerMove", "EngineMove") for e in errors for part in e.get("loc", ())):
            engine_move = '{"engine": true}' if engine.network is None else '{"engine": true, "depth": N}'
            return _error(422, f'a move is {{"move": "up", "right", "down" or "left"}} or {engine_move}: '
                          + _one_line(error))
        return _error(422, _one_line(error))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request: Request, exc: StarletteHTTPException):
        return _error(exc.status_code, exc.detail, exc.headers)

    @app.exception_handler(TD2048Error)
    async def refused(_request: Request, exc: TD2048Error):
        status = _STATUS.get(type(exc), 422)
        return _error(status, str(exc), {"Retry-After": "1"} if status == 503 else None)

    @app.exception_handler(Exception)
    async def failed(_request: Request, _exc: Exception):  # a bug: still one line of JSON, and the server lives
        return _error(500, "internal error")

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def index():
        return HTMLResponse(page)

    @app.get("/api/model", summary="The model and this server's limits")
    async def model() -> dict:
        return JSONResponse({**engine.model_info(), "games": {"kept": len(store), "max": store.max_games,
                                                               "max_age": store.max_age}})

    @app.post("/api/analyze", response_model=Analysis, responses=refusals,
              summary="Every move's value at a depth (td2048 analyze --json); on a solved board, the exact values")
    async def analyze(position: Position) -> JSONResponse:
        board, depth = engine.board(position.board), engine.check_depth(position.depth)
        return JSONResponse(await engine.run(engine.analysis, board, depth))

    @app.post("/api/move", response_model=MoveAnswer, responses=refusals, summary="The engine's move for a board")
    async def move(position: Position) -> JSONResponse:
        board, depth = engine.board(position.board), engine.check_depth(position.depth)
        values = await engine.run(engine.values, board, depth)
        best = best_move(values)
        return JSONResponse({"move": best, "value": values[best]})

    @app.post("/api/games", status_code=201, response_model=GameSummary, responses=refusals,
              summary="Start a game (two new tiles on an empty board)")
    async def new_game(settings: Annotated[NewGame | None, Body()] = None) -> JSONResponse:
        game = store.new(None if settings is None else settings.seed)
        return JSONResponse(game.summary(), 201)

    GameId = Annotated[str, Path(max_length=64, description="the id POST /api/games answered")]  # noqa: N806

    @app.get("/api/games/{game_id}", response_model=GameState, responses=game_refusals, summary="A game so far")
    async def game_state(game_id: GameId) -> JSONResponse:
        return JSONResponse(store.get(game_id).state())

    @app.post("/api/games/{game_id}/moves", response_model=MoveResult, responses=game_refusals,
              summary="A move in a game, the player's or the engine's, and the new tile after it")
    async def game_move(game_id: GameId, request: Annotated[PlayerMove | EngineMove, Body()]) -> JSONResponse:
        game = store.get(game_id)
        if game.searching:
            raise Conflict(f"game {game_id} is waiting for the engine's move: one move at a time")
        by_engine = isinstance(request, EngineMove)
        if not by_engine and engine.solution is None:
            return JSONResponse(game.move(request.move))
        depth = engine.check_depth(request.depth) if by_engine else None
        if game.over:
            raise Conflict(f"game {game_id} is over: start a new one (or undo)")
        game.searching = True
        try:
            values, exact = await engine.run(engine.before_move, game.board, depth, by_engine)
        finally:
            game.searching = False
        move = best_move(values) if by_engine else request.move
        loss = None if exact is None or exact["moves"][move] is None else _loss(exact, move)
        result = game.move(move, loss)
        if by_engine:
            result.update(values=values, depth=depth)
        if engine.solution is not None:
            result.update(exact=exact, loss=loss)
        return JSONResponse(result)

    @app.post("/api/games/{game_id}/undo", response_model=GameSummary, responses=game_refusals,
              summary="Take back a game's last move")
    async def undo(game_id: GameId) -> JSONResponse:
        game = store.get(game_id)
        if game.searching:
            raise Conflict(f"game {game_id} is waiting for the engine's move: one move at a time")
        return JSONResponse(game.undo())

    record_answer = {200: {"description": "one line of the course's record grammar",
                           "content": {"text/plain": {"schema": {"type": "string"}}}}}

    @app.get("/api/games/{game_id}/record", response_model=None, responses={**record_answer, **game_refusals},
             summary="A game's record, one line of the course's grammar (td2048 judge checks it once it is over)")
    async def record(game_id: GameId) -> PlainTextResponse:
        game = store.get(game_id)
        return PlainTextResponse(game.record() + "\n", headers={
            "Content-Disposition": f'attachment; filename="td2048-{game.game}-{game.id}.txt"'})

    @app.post("/api/replay", responses=refusals,
              summary="A record file's games as the replay viewer shows them (td2048 replay's data)")
    async def replay(request: Replay) -> JSONResponse:
        data, _ = await engine.run(replay_text, request.records, "records", request.game, REPLAY_MAX_GAMES)
        return JSONResponse(data)

    app.add_middleware(Guard, local=local)
    return app


def _loss(exact: dict, move: str) -> float:
    """The expected score a move lost against perfect play: Q*(the perfect move) - Q*(the move), 0 when it is
    within :data:`td2048.solve.policy.RTOL` of the best (an optimal move, as ``td2048 eval --exact`` counts them)."""
    best, played = exact["value"], exact["moves"][move]
    return 0.0 if played >= best - RTOL * abs(best) else best - played


def _page(engine: Engine) -> str:
    """The web app: one page, its script, style and the replay viewer inline."""
    static = resources.files("td2048.server").joinpath("static")
    assets = viewer_assets()
    config = {"moves": list(MOVE_NAMES), "model": engine.model_info(), **palette_data(engine.game)}
    return (static.joinpath("index.html").read_text(encoding="utf-8")
            .replace("/*__VIEWER_CSS__*/", assets["viewer.css"])
            .replace("/*__APP_CSS__*/", static.joinpath("app.css").read_text(encoding="utf-8"))
            .replace("<!--__VIEWER_HTML__-->", VIEWER_HTML)
            .replace("/*__VIEWER_JS__*/", assets["viewer.js"])
            .replace("/*__APP_JS__*/", static.joinpath("app.js").read_text(encoding="utf-8"))
            .replace("__CONFIG__", json.dumps(config, separators=(",", ":")).replace("<", "\\u003c")))


__all__ = ["Guard", "create_app"]
