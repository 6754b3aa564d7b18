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
"""

from __future__ import annotations

import html
import json
import os
from dataclasses import dataclass
from pathlib import Path

from td2048.config import REPLAY_MAX_GAMES as MAX_GAMES
from td2048.errors import TD2048Error
from td2048.games.tiles import GAMES, WIN_TILE, tile_code, tile_value
from td2048.games.wide import MAX_WIDE_CODE, py_wide_move, wide_to_codes
from td2048.io.atomic import atomic_open
from td2048.judge import SLIDE, ParsedFile, RecordFormatError, check_rules, parse_records
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


def write_replay_html(records_path: str | os.PathLike, out_path: str | os.PathLike, game: str | None = None,
                      show: int = 1, max_games: int = MAX_GAMES) -> ReplaySummary:
    """Check and replay ``records_path``, write the page to ``out_path`` (atomically) showing game ``show``
    (1-based) first; ``game`` None detects the rules (:func:`detect_game`)."""
    try:
        parsed = parse_records(records_path)
    except RecordFormatError as e:  # the judge's messages name the line; most do not name the file
        raise TD2048Error(str(e) if str(e).startswith(f"{records_path}:") else f"{records_path}: {e}") from None
    total = len(parsed.line_numbers)
    embedded = min(total, max_games)
    if not 1 <= show <= embedded:
        raise TD2048Error(f"--show {show}: the page holds games 1 to {embedded} of {total}"
                          + (" (raise --max-games)" if show > embedded < total else ""))
    detected = game is None
    if detected:
        game = detect_game(parsed, records_path)
    elif (violation := rule_violation(parsed, game)) is not None:
        raise TD2048Error(f"{records_path}: {violation[1]}")
    games = [replay_game(parsed, e, game) for e in range(embedded)]
    data = {"total": total, "show": show - 1, "win": tile_code(game, WIN_TILE[game]), "colours": LEVELS,
            "levels": [level(code, game) for code in range(MAX_WIDE_CODE + 1)],
            "values": [tile_value(game, c) for c in range(MAX_WIDE_CODE + 1)], "games": games}
    page = (_PAGE.replace("__DATA__", json.dumps(data, separators=(",", ":")))
            .replace("__TITLE__", html.escape(f"{Path(records_path).name}: {game} replay")))
    with atomic_open(out_path, "w") as f:
        f.write(page)
    return ReplaySummary(game, detected, total, embedded, sum(len(g["moves"]) for g in games),
                         len(page.encode()))


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
#game { font: inherit; padding: 4px; max-width: 100%; margin-bottom: 14px; }
.layout { display: flex; flex-wrap: wrap; gap: 24px; align-items: flex-start; }
.panel { flex: 1; min-width: 280px; }
#board { display: grid; grid-template-columns: repeat(4, 88px); grid-auto-rows: 88px; gap: 10px; padding: 10px;
         background: #bbada0; border-radius: 8px; }
.cell { display: flex; align-items: center; justify-content: center; border-radius: 5px; font-weight: bold;
        background: rgba(238, 228, 218, 0.35); overflow: hidden; white-space: nowrap; }
.cell.new { outline: 3px solid #8f7a66; outline-offset: -3px; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 6px 14px; margin: 0 0 16px; font-size: 17px; }
dt { font-weight: bold; }
dd { margin: 0; font-variant-numeric: tabular-nums; }
.controls { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; margin-bottom: 12px; }
button { font: inherit; padding: 5px 10px; border: 0; border-radius: 4px; background: #8f7a66; color: #f9f6f2;
         cursor: pointer; min-width: 44px; }
button:hover { background: #9f8b77; }
#slider { width: 100%; margin: 0 0 12px; }
.help { font-size: 13px; }
kbd { border: 1px solid #bbada0; border-radius: 3px; padding: 0 4px; background: #fff; }
</style>
</head>
<body>
<main>
<h1>__TITLE__ <small id="about"></small></h1>
<label>Game <select id="game" aria-label="game"></select></label>
<div class="layout">
  <div id="board" aria-label="board"></div>
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
</div>
</main>
<script type="application/json" id="replay-data">__DATA__</script>
<script>
"use strict";
// Only shows the boards computed by td2048 (see td2048/io/replay_html.py): no game rules here.
const data = JSON.parse(document.getElementById("replay-data").textContent);
const $ = (id) => document.getElementById(id);
// td2048's palette by level (td2048/palette.py: 1 = the smallest tile ... 11 = the win tile, darker beyond)
const COLOURS = data.colours;
const FONT = [40, 40, 40, 34, 28, 23, 19, 16, 14, 13, 12];  // px by digits of the value
const DIRECTIONS = {U: "\\u2191 up", R: "\\u2192 right", D: "\\u2193 down", L: "\\u2190 left"};
const cells = [];
let game = null, step = 0, timer = null;

// each code's level, from td2048/palette.py: the win tile (2048 or 2584) is gold in both games
const level = (code) => data.levels[code];

function render() {
  const board = game.boards.substr(16 * step, 16);
  const placed = step > 0 ? parseInt(game.placed[step - 1], 16) : -1;
  let largest = 0;
  for (let i = 0; i < 16; i++) {
    const code = parseInt(board[i], 32), cell = cells[i], text = code ? String(data.values[code]) : "";
    largest = Math.max(largest, code);
    cell.dataset.code = code;
    cell.textContent = text;
    cell.classList.toggle("new", i === placed);
    cell.style.background = code ? COLOURS[level(code)] : "";
    cell.style.color = level(code) <= 2 ? "#776e65" : "#f9f6f2";
    cell.style.fontSize = FONT[Math.min(text.length, FONT.length - 1)] + "px";
  }
  $("score").textContent = game.scores[step];
  $("move").textContent = step + " / " + (game.scores.length - 1);
  $("largest").textContent = data.values[largest];
  $("last").textContent = step > 0 ? DIRECTIONS[game.moves[step - 1]] : "\\u2014";
  $("slider").value = step;
  $("board").dataset.step = step;
}

function go(t) {
  step = Math.max(0, Math.min(t, game.scores.length - 1));
  render();
}

function pause() {
  clearTimeout(timer);
  timer = null;
  $("play").textContent = "play";
}

function tick() {
  if (step >= game.scores.length - 1) return pause();
  go(step + 1);
  timer = setTimeout(tick, 1000 / Number($("speed").value));
}

function play() {
  if (timer !== null) return pause();
  if (step >= game.scores.length - 1) go(0);
  $("play").textContent = "pause";
  timer = setTimeout(tick, 1000 / Number($("speed").value));
}

function pick(index) {
  pause();
  game = data.games[index];
  $("game").value = index;
  $("board").dataset.game = index + 1;
  $("slider").max = game.scores.length - 1;
  go(0);
}

function faster(by) {
  const speed = $("speed");
  speed.selectedIndex = Math.max(0, Math.min(speed.selectedIndex + by, speed.options.length - 1));
}

for (let i = 0; i < 16; i++) {
  const cell = document.createElement("div");
  cell.className = "cell";
  cell.dataset.cell = i;
  $("board").appendChild(cell);
  cells.push(cell);
}
data.games.forEach((g, i) => $("game").add(new Option(
  `Game ${i + 1}: score ${g.score}, largest tile ${g.largest}, ${g.moves.length} moves`, i)));
$("about").textContent = data.games.length < data.total ?
  `(games 1 to ${data.games.length} of ${data.total})` : `(${data.total} game${data.total > 1 ? "s" : ""})`;
$("game").addEventListener("change", (e) => pick(Number(e.target.value)));
$("slider").addEventListener("input", (e) => { pause(); go(Number(e.target.value)); });
$("first").addEventListener("click", () => { pause(); go(0); });
$("back").addEventListener("click", () => { pause(); go(step - 1); });
$("play").addEventListener("click", play);
$("forward").addEventListener("click", () => { pause(); go(step + 1); });
$("end").addEventListener("click", () => { pause(); go(Infinity); });
document.addEventListener("keydown", (e) => {
  const tag = e.target.tagName;
  // a focused picker or slider keeps its own keys, but space always plays / pauses
  if (tag === "SELECT" || (tag === "INPUT" && e.key !== " ")) return;
  const actions = {" ": play, ArrowLeft: () => $("back").click(), ArrowRight: () => $("forward").click(),
                   Home: () => $("first").click(), End: () => $("end").click(),
                   ArrowUp: () => faster(1), ArrowDown: () => faster(-1)};
  if (!(e.key in actions)) return;
  e.preventDefault();
  actions[e.key]();
});
pick(data.show);
</script>
</body>
</html>
"""
