"use strict";
// td2048's board viewer, shared by the replay page (td2048 replay) and the web app (td2048 serve).
// It only shows boards computed by td2048 (td2048/io/replay_html.py): no game rules here.
// look = {colours, levels, values}: td2048's palette by level (td2048/palette.py: 1 = the smallest tile
// ... 11 = the win tile, gold in both games, darker beyond), each code's level, each code's tile value.
const FONT = [40, 40, 40, 34, 28, 23, 19, 16, 14, 13, 12];  // px by digits of the value
const DIRECTIONS = {U: "\u2191 up", R: "\u2192 right", D: "\u2193 down", L: "\u2190 left"};

// 16 cells in a board's element, row-major, each with data-cell = its index
function makeCells(board) {
  const cells = [];
  for (let i = 0; i < 16; i++) {
    const cell = document.createElement("div");
    cell.className = "cell";
    cell.dataset.cell = i;
    board.appendChild(cell);
    cells.push(cell);
  }
  return cells;
}

// one cell showing a code (0 empty) in td2048's colours
function paintCell(cell, code, look) {
  const text = code ? String(look.values[code]) : "", level = look.levels[code];
  cell.dataset.code = code;
  cell.textContent = text;
  cell.style.background = code ? look.colours[level] : "";
  cell.style.color = level <= 2 ? "#776e65" : "#f9f6f2";
  cell.style.fontSize = FONT[Math.min(text.length, FONT.length - 1)] + "px";
}

// The replay viewer on the elements of VIEWER_HTML (td2048/io/replay_html.py); keysOn() tells whether its
// keys are live (always on the replay page; in the web app, while the replay is shown). Returns show(data):
// data as replay_html.replay_data makes it, {total, show, colours, levels, values, games: [...]}.
function replayViewer(keysOn = () => true) {
  const $ = (id) => document.getElementById(id);
  const cells = makeCells($("board"));
  let data = null, game = null, step = 0, timer = null;

  function render() {
    const board = game.boards.substr(16 * step, 16);
    const placed = step > 0 ? parseInt(game.placed[step - 1], 16) : -1;
    let largest = 0;
    for (let i = 0; i < 16; i++) {
      const code = parseInt(board[i], 32);
      largest = Math.max(largest, code);
      paintCell(cells[i], code, data);
      cells[i].classList.toggle("new", i === placed);
    }
    $("score").textContent = game.scores[step];
    $("move").textContent = step + " / " + (game.scores.length - 1);
    $("largest").textContent = data.values[largest];
    $("last").textContent = step > 0 ? DIRECTIONS[game.moves[step - 1]] : "\u2014";
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
    if (!game || !keysOn() || tag === "SELECT" || (tag === "INPUT" && e.key !== " ")) return;
    const actions = {" ": play, ArrowLeft: () => $("back").click(), ArrowRight: () => $("forward").click(),
                     Home: () => $("first").click(), End: () => $("end").click(),
                     ArrowUp: () => faster(1), ArrowDown: () => faster(-1)};
    if (!(e.key in actions)) return;
    e.preventDefault();
    actions[e.key]();
  });

  return function show(replay) {
    if (game) pause();
    data = replay;
    $("game").replaceChildren();
    data.games.forEach((g, i) => $("game").add(new Option(
      `Game ${i + 1}: score ${g.score}, largest tile ${g.largest}, ${g.moves.length} moves`, i)));
    $("about").textContent = data.games.length < data.total ?
      `(games 1 to ${data.games.length} of ${data.total})` : `(${data.total} game${data.total > 1 ? "s" : ""})`;
    pick(data.show);
  };
}
