"""Recorded games as one self-contained HTML page: a board to step through, play, and pick games from.

The record file (:mod:`td2048.io.records`) is checked with the judge's rules and replayed here,
in Python, on 5-bit boards (both games); the page gets the resulting boards, not the actions,
so that its JavaScript holds no copy of the merge rules. Per game it embeds::

    boards  16 characters per board, one base-32 digit per cell code (0 empty .. v = 31),
            board 0 after the two start tiles, board t after move t and its new tile
    scores  the score at each board
    moves   one letter per move (U R D L), move t leading from board t-1 to board t
    placed  one hex digit per move: the cell of the tile placed after it

About 25 bytes per move, so a page holds at most ``max_games`` games (the first ones of the file).

The viewer (``viewer.js`` and ``viewer.css`` beside this module, the markup in :data:`VIEWER_HTML`) is
inlined into the page, and the web app of ``td2048 serve`` shows records with the same files.
"""

from __future__ import annotations

import html
import json
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from td2048.config import REPLAY_MAX_GAMES as MAX_GAMES
from td2048.errors import TD2048Error
from td2048.games.tiles import GAMES, WIN_TILE, tile_code, tile_value
from td2048.games.wide import MAX_WIDE_CODE, py_wide_move, wide_to_codes
from td2048.io.atomic import atomic_open
from td2048.judge import SLIDE, ParsedFile, RecordFormatError, check_rules, parse_record_text, parse_records
from td2048.palette import LEVELS, level

_DIGITS = "0123456789abcdefghijklmnopqrstuv"  # code -> one base-32 digit, read back by parseInt(c, 32)


@dataclass
class ReplaySummary:
    game: str  # the rules the record was replayed with
    detected: bool  # True when the game was detected from the record rather than given
    games: int  # games in the file
    embedded: int  # games on the page
    moves: int  # moves on the page
    size: int  # bytes of the page


def rule_violation(parsed: ParsedFile, game: str) -> tuple[tuple[int, int], str] | None:
    """The judge's rule checks under ``game``: None if every line is legal, else ((episode, action), one line)."""
    check = check_rules(parsed, game)
    return None if check.violation is None else (check.where, check.violation)


def detect_game(parsed: ParsedFile, path: str | os.PathLike) -> str:
    """The game whose rules the record follows: 2048 when both do (a short 2048-like game can be legal in
    both), and when neither does, an error that names the violation of the game whose replay got further."""
    violations = {game: rule_violation(parsed, game) for game in GAMES}
    legal = [game for game, v in violations.items() if v is None]
    if legal:
        return legal[0]
    game = max(GAMES, key=lambda g: violations[g][0])
    raise TD2048Error(f"{path}: not a legal record of either game; {violations[game][1]}")


def replay_game(parsed: ParsedFile, episode: int, game: str) -> dict:
    """One game's boards, scores, moves and placed cells, encoded as in the module's docstring."""
    first, last = parsed.starts[episode], parsed.starts[episode + 1]
    board, score = (0, 0), 0
    boards, scores, moves, placed = [], [], [], []
    for i, (kind, arg, code) in enumerate(zip(parsed.kinds[first:last].tolist(), parsed.args[first:last].tolist(),
                                              parsed.codes[first:last].tolist())):
        if kind == SLIDE:
            board, reward = py_wide_move(game, board, arg)
            score += reward
            moves.append("URDL"[arg])
            continue
        board = (board[0] | code << (4 * arg), board[1])
        if i > 1:
            placed.append(f"{arg:x}")
        if i > 0:
            boards.append("".join(_DIGITS[c] for c in wide_to_codes(board)))
            scores.append(score)
    if not boards:  # the judge takes a line without actions (or one placement) as a game that is over
        boards, scores = ["".join(_DIGITS[c] for c in wide_to_codes(board))], [0]
    return {"score": score, "largest": tile_value(game, max(_DIGITS.index(c) for c in boards[-1])),
            "boards": "".join(boards), "scores": scores, "moves": "".join(moves), "placed": "".join(placed)}


def replay_data(parsed: ParsedFile, name: str | os.PathLike, game: str | None = None, show: int = 1,
                max_games: int = MAX_GAMES) -> tuple[dict, ReplaySummary]:
    """The viewer's data for parsed records (games, boards, the palette) and their summary (``size`` 0).

    Parameters
    ----------
    parsed : ParsedFile
        The records, as :func:`td2048.judge.parse_records` or :func:`td2048.judge.parse_record_text` read them.
    name : str or os.PathLike
        What the records are called in error messages (their file).
    game : str or None
        The rules to replay with; None detects them (:func:`detect_game`).
    show : int
        The game shown first, 1-based.
    max_games : int
        The most games replayed: the first ones.

    Returns
    -------
    tuple of (dict, ReplaySummary)
        The data that ``viewer.js`` shows (``show(data)``) and what it holds.

    Raises
    ------
    TD2048Error
        A record that breaks the rules, or ``show`` past the games replayed.
    """
    total = len(parsed.line_numbers)
    embedded = min(total, max_games)
    if not 1 <= show <= embedded:
        raise TD2048Error(f"--show {show}: the page holds games 1 to {embedded} of {total}"
                          + (" (raise --max-games)" if show > embedded < total else ""))
    detected = game is None
    if detected:
        game = detect_game(parsed, name)
    elif (violation := rule_violation(parsed, game)) is not None:
        raise TD2048Error(f"{name}: {violation[1]}")
    games = [replay_game(parsed, e, game) for e in range(embedded)]
    data = {"total": total, "show": show - 1, "win": tile_code(game, WIN_TILE[game]), **palette_data(game),
            "games": games}
    return data, ReplaySummary(game, detected, total, embedded, sum(len(g["moves"]) for g in games), 0)


def replay_text(text: str, name: str = "records", game: str | None = None,
                max_games: int = MAX_GAMES) -> tuple[dict, ReplaySummary]:
    """:func:`replay_data` of a record file's contents (the web app's replays: no file is read).

    Raises
    ------
    TD2048Error
        Text that is not records, or records that break the rules.
    """
    try:
        parsed = parse_record_text(text, name)
    except RecordFormatError as e:
        raise TD2048Error(str(e) if str(e).startswith(f"{name}:") else f"{name}: {e}") from None
    return replay_data(parsed, name, game, 1, max_games)


def palette_data(game: str) -> dict:
    """What the viewer paints cells with: ``colours`` by level, each code's ``levels`` and tile ``values``."""
    return {"colours": LEVELS, "levels": [level(code, game) for code in range(MAX_WIDE_CODE + 1)],
            "values": [tile_value(game, c) for c in range(MAX_WIDE_CODE + 1)]}


def viewer_assets() -> dict[str, str]:
    """The viewer's files: ``{"viewer.js": ..., "viewer.css": ...}`` (ASCII text)."""
    folder = resources.files("td2048.io")
    return {name: folder.joinpath(name).read_text(encoding="ascii") for name in ("viewer.js", "viewer.css")}


def write_replay_html(records_path: str | os.PathLike, out_path: str | os.PathLike, game: str | None = None,
                      show: int = 1, max_games: int = MAX_GAMES) -> ReplaySummary:
    """Check and replay ``records_path``, write the page to ``out_path`` (atomically) showing game ``show``
    (1-based) first; ``game`` None detects the rules (:func:`detect_game`)."""
    try:
        parsed = parse_records(records_path)
    except RecordFormatError as e:  # the judge's messages name the line; most do not name the file
        raise TD2048Error(str(e) if str(e).startswith(f"{records_path}:") else f"{records_path}: {e}") from None
    data, summary = replay_data(parsed, records_path, game, show, max_games)
    assets = viewer_assets()
    page = (_PAGE.replace("__VIEWER_CSS__", assets["viewer.css"]).replace("__VIEWER_HTML__", VIEWER_HTML)
            .replace("__VIEWER_JS__", assets["viewer.js"])
            .replace("__DATA__", json.dumps(data, separators=(",", ":")))
            .replace("__TITLE__", html.escape(f"{Path(records_path).name}: {summary.game} replay")))
    with atomic_open(out_path, "w") as f:
        f.write(page)
    summary.size = len(page.encode())
    return summary


# The viewer's markup: viewer.js finds its parts by these ids (one viewer on a page).
VIEWER_HTML = """<label>Game <select id="game" aria-label="game"></select></label>
<div class="layout">
  <div id="board" class="board" aria-label="board"></div>
  <div class="panel">
    <dl>
      <dt>Score</dt><dd id="score"></dd>
      <dt>Move</dt><dd id="move"></dd>
      <dt>Largest tile</dt><dd id="largest"></dd>
      <dt>Last move</dt><dd id="last"></dd>
    </dl>
    <div class="controls">
      <button id="first" title="first board (Home)">|&#x25C0;</button>
      <button id="back" title="step back (&#x2190;)">&#x25C0;</button>
      <button id="play" title="play / pause (space)">play</button>
      <button id="forward" title="step forward (&#x2192;)">&#x25B6;</button>
      <button id="end" title="last board (End)">&#x25B6;|</button>
      <label>speed <select id="speed">
        <option value="1">1</option><option value="2">2</option><option value="5" selected>5</option>
        <option value="10">10</option><option value="20">20</option><option value="50">50</option>
        <option value="100">100</option><option value="500">500</option>
      </select> moves/s</label>
    </div>
    <input type="range" id="slider" min="0" max="0" value="0" aria-label="move">
    <p class="help"><kbd>space</kbd> play / pause, <kbd>&#x2190;</kbd> <kbd>&#x2192;</kbd> step,
      <kbd>Home</kbd> <kbd>End</kbd> first / last board, <kbd>&#x2191;</kbd> <kbd>&#x2193;</kbd> speed</p>
  </div>
</div>"""

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>__TITLE__</title>
<style>
body { margin: 0; padding: 20px; background: #faf8ef; color: #776e65;
       font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; }
main { max-width: 760px; margin: 0 auto; }
h1 { font-size: 22px; margin: 0 0 12px; color: #776e65; }
h1 small { font-weight: normal; font-size: 15px; }
__VIEWER_CSS__</style>
</head>
<body>
<main>
<h1>__TITLE__ <small id="about"></small></h1>
__VIEWER_HTML__
</main>
<script type="application/json" id="replay-data">__DATA__</script>
<script>
__VIEWER_JS__
replayViewer()(JSON.parse(document.getElementById("replay-data").textContent));
</script>
</body>
</html>
"""
