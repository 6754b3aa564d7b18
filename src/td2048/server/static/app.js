// The web app of td2048 serve. Every rule of the game is the server's: this page sends moves and shows
// the boards it gets back (cells painted by viewer.js, the replay viewer's code).
const config = JSON.parse(document.getElementById("config").textContent);
const $ = (id) => document.getElementById(id);
const MOVES = config.moves;  // up, right, down, left
const ARROWS = {up: "\u2191", right: "\u2192", down: "\u2193", left: "\u2190"};
const KEYS = {ArrowUp: "up", ArrowRight: "right", ArrowDown: "down", ArrowLeft: "left",
              w: "up", d: "right", s: "down", a: "left", W: "up", D: "right", S: "down", A: "left"};
const codeOf = (tile) => config.values.indexOf(tile);
// the model's board: rows x cols cells, row-major from the top-left corner (4x4 unless the model says otherwise)
const ROWS = config.model.rows, COLS = config.model.cols, CELLS = ROWS * COLS, FULL = ROWS === 4 && COLS === 4;
// a server with a model (its values at a search depth), with a solution (every move's exact value), or both
const MODEL = config.model.network !== null, SOLVED = config.model.solution !== null;
let tab = "play";

async function api(method, path, body) {
  const response = await fetch(path, {method, headers: body === undefined ? {} : {"Content-Type": "application/json"},
                                      body: body === undefined ? undefined : JSON.stringify(body)});
  const answer = await response.json();
  if (!response.ok) throw new Error(answer.error || response.statusText);
  return answer;
}

// the cells of a board of the model's shape in a board's element (the viewer's 16 on 4x4), each with data-cell
function boardCells(board) {
  if (FULL) return makeCells(board);
  board.dataset.rows = ROWS;
  board.dataset.cols = COLS;
  board.style.setProperty("--cols", COLS);
  return Array.from({length: CELLS}, (_, i) => {
    const cell = document.createElement("div");
    cell.className = "cell";
    cell.dataset.cell = i;
    return board.appendChild(cell);
  });
}

function paintBoard(cells, tiles) {
  tiles.forEach((tile, i) => paintCell(cells[i], codeOf(tile), config));
}

// every move's value (the engine's: the model's at its depth, or without a model the exact ones) and, on a solved
// board, its exact value and what it loses against the perfect move; exact is null for a board the solution
// does not hold
function showValues(table, values, best, exact = null) {
  table.replaceChildren();
  if (SOLVED) {
    const head = table.createTHead().insertRow();
    for (const name of ["move", "exact value", "loses", ...(MODEL ? ["model"] : [])]) {
      head.appendChild(document.createElement("th")).textContent = name;
    }
  }
  const body = table.tBodies[0] || table.createTBody();
  for (const move of MOVES) {
    const row = body.insertRow(), value = values[move];
    row.dataset.move = move;
    row.className = value === null ? "illegal" : move === best ? "best" : "";
    if (value !== null) row.dataset.value = value;
    row.insertCell().textContent = ARROWS[move] + " " + move;
    if (SOLVED) {
      const q = exact === null ? null : exact.moves[move];
      const loses = q === null ? null : lossOf(exact, move);
      if (q !== null) {
        row.dataset.exact = q;
        row.dataset.loses = loses;
        if (loses === 0) row.classList.add("perfect");
      }
      row.insertCell().textContent = q === null ? (value === null ? "illegal" : "\u2014") : q.toFixed(2);
      const cell = row.insertCell();
      cell.textContent = loses === null ? "" : loses === 0 ? "0 (perfect)" : amount(loses);
      if (loses) cell.title = `${loses.toPrecision(3)} expected score`;
      if (!MODEL) continue;
    }
    row.insertCell().textContent = value === null ? "illegal" : value.toFixed(1);
  }
}

// an expected score lost, one format wherever a loss shows (a move's, a game's total): 0 for nothing lost, as a
// perfect move's "0 (perfect)"; two decimals otherwise, "< 0.01" for a loss that they would show as 0.00 (moves
// whose values differ in the fourth decimal)
const amount = (loss) => (loss === 0 ? "0" : loss < 0.005 ? "< 0.01" : loss.toFixed(2));

// what a move loses against the perfect move: 0 within 1e-9 relative of it, the solution's precision (an optimal
// move, as td2048 eval --exact counts them, and as the server's loss of a played move says)
function lossOf(exact, move) {
  const q = exact.moves[move];
  return q >= exact.value - 1e-9 * Math.abs(exact.value) ? 0 : exact.value - q;
}

// the perfect move and the optimum of a board, in a line's two elements; exact null: a board the start of a game
// never reaches (one set by hand, on its way to a position), said plainly, since it is no error
function showPerfect(perfect, optimum, exact) {
  $(perfect).textContent = exact === null ? "\u2014" : ARROWS[exact.best] + " " + exact.best;
  $(optimum).textContent = exact === null ? "(not reachable: no game from the start reaches this "
    + "board, so the solution holds no value of it)" : `(expected score ${exact.value.toFixed(2)} under perfect play)`;
}

// the line after a move on a solved board: what it lost, and the game so far
function lossLine(result) {
  if (!SOLVED || result.loss === null || result.loss === undefined) return "";
  const game = result.lost > 0 ? ` This game has lost ${amount(result.lost)} so far.` : "";
  if (result.loss === 0) return "Perfect move." + game;
  const best = result.exact.best;
  return `This move lost ${amount(result.loss)} expected score (the perfect move was ${ARROWS[best]} ${best}).` + game;
}

function depthOptions(select) {
  if (!MODEL) return;  // perfect play: no search depth
  for (let d = 1; d <= config.model.depth.max; d++) select.add(new Option(String(d), d));
  select.value = config.model.depth.default;
}

function status(id, text, error = false) {
  $(id).textContent = text;
  $(id).classList.toggle("error", error);
}

// ---- Play: a game the server runs; moves by the keyboard, swipes or the engine -------------------
const play = {game: null, cells: boardCells($("play-board")), chain: Promise.resolve(), engine: false, timer: null};

// the hint belongs to the board shown: every new board (a move of the player's or the engine's, an undo, a new
// game, the end of a game) clears it, and h asks for the new board's
function clearHint() {
  $("hint").hidden = true;
  $("hint-values").replaceChildren();
  $("hint-best").textContent = "";
  $("hint-depth").textContent = "";
  $("hint-perfect").textContent = "";
  $("hint-optimum").textContent = "";
  delete $("hint").dataset.moves;
}

// a request's depth: the chosen one with a model, none without (perfect play)
const withDepth = (body, select) => (MODEL ? {...body, depth: Number($(select).value)} : body);

function showGame(game, last = "", loss = "") {
  play.game = game;
  clearHint();
  $("last-move").textContent = last;
  $("move-loss").textContent = loss;
  if (SOLVED) $("play-lost").textContent = amount(game.lost);
  paintBoard(play.cells, game.board);
  $("play-board").setAttribute("aria-busy", "false");
  $("play-score").textContent = game.score;
  $("play-largest").textContent = game.max_tile;
  $("play-moves").textContent = game.moves;
  $("play-board").dataset.gameId = game.id;
  $("play-board").dataset.moves = game.moves;
  $("record-link").href = `/api/games/${game.id}/record`;
  status("play-status", game.over ? `Game over: score ${game.score}, largest tile ${game.max_tile}.` : "");
  if (game.over) stopEngine();
}

// one request at a time, in the order asked: keys pressed while a move is on its way wait their turn
function act(work) {
  play.chain = play.chain.then(work).catch((e) => { status("play-status", e.message, true); stopEngine(); });
  return play.chain;
}

function placedCell(result) {
  play.cells.forEach((c) => c.classList.remove("new"));
  if (result.placed) play.cells[result.placed.cell].classList.add("new");
}

const newGame = () => act(async () => {
  showGame(await api("POST", "/api/games", {}));
});

function playerMove(move) {
  stopEngine();  // a move of one's own takes over from the engine
  act(async () => {
    // a move that does not change the board does nothing, as in the game (the server would refuse it)
    if (!play.game || play.game.over || !play.game.legal.includes(move)) return;
    const result = await api("POST", `/api/games/${play.game.id}/moves`, {move});
    placedCell(result);
    showGame(result, "", lossLine(result));
  }).catch(() => {});
}

async function engineMove() {
  const result = await api("POST", `/api/games/${play.game.id}/moves`, withDepth({engine: true}, "depth"));
  placedCell(result);
  // its values are those of the board before the move: said of the move, not shown as a hint for the new board
  const how = MODEL ? `value ${result.values[result.move].toFixed(1)} at depth ${result.depth}`
    : `perfect play: expected score ${result.values[result.move].toFixed(2)}`;
  showGame(result, `The engine played ${ARROWS[result.move]} ${result.move} (${how}).`, lossLine(result));
}

function engineStep() {
  play.timer = null;
  if (!play.engine) return;
  act(async () => {
    if (!play.engine || play.game.over) return stopEngine();
    await engineMove();
    if (play.engine) play.timer = setTimeout(engineStep, 1000 / Number($("engine-speed").value));
  });
}

function startEngine() {
  if (!play.game || play.game.over) return;
  play.engine = true;
  $("engine").textContent = "pause";
  $("play-board").dataset.engine = "on";
  engineStep();
}

function stopEngine() {
  play.engine = false;
  clearTimeout(play.timer);
  play.timer = null;
  $("engine").textContent = "engine plays";
  $("play-board").dataset.engine = "off";
}

const hint = () => act(async () => {
  if (!play.game || play.game.over) return;
  const answer = await api("POST", "/api/analyze", withDepth({board: play.game.board}, "depth"));
  showValues($("hint-values"), answer.moves, answer.best, answer.exact ?? null);
  $("hint-best").textContent = ARROWS[answer.best] + " " + answer.best;
  $("hint-depth").textContent = MODEL ? `(depth ${answer.depth})` : "";
  if (SOLVED) showPerfect("hint-perfect", "hint-optimum", answer.exact);
  $("hint").dataset.moves = play.game.moves;  // the board it belongs to
  $("hint").hidden = false;
});

const undo = () => {
  stopEngine();
  return act(async () => {
    if (!play.game || play.game.moves === 0) return;
    showGame(await api("POST", `/api/games/${play.game.id}/undo`));
    play.cells.forEach((c) => c.classList.remove("new"));
  });
};

$("new-game").addEventListener("click", () => { stopEngine(); newGame(); });
$("undo").addEventListener("click", undo);
$("hint-button").addEventListener("click", hint);
$("engine").addEventListener("click", () => (play.engine ? stopEngine() : startEngine()));
depthOptions($("depth"));

// swipes: the longer axis of a pointer's travel over the board, at least 30 px
let swipe = null;
$("play-board").addEventListener("pointerdown", (e) => { swipe = [e.clientX, e.clientY]; });
$("play-board").addEventListener("pointerup", (e) => {
  if (!swipe) return;
  const dx = e.clientX - swipe[0], dy = e.clientY - swipe[1];
  swipe = null;
  if (Math.max(Math.abs(dx), Math.abs(dy)) < 30) return;
  playerMove(Math.abs(dx) > Math.abs(dy) ? (dx > 0 ? "right" : "left") : (dy > 0 ? "down" : "up"));
});

// ---- Analyse: a board set by clicking, every move's value -----------------------------------------
const analysis = {cells: boardCells($("analysis-board")), tiles: new Array(CELLS).fill(0), tile: 2, asked: 0};

function showAnalysisBoard() {
  paintBoard(analysis.cells, analysis.tiles);
  analyse();
}

// the board's analysis as it is built: an empty board asks nothing (there is nothing to analyse yet); on a solved
// board, one the start of a game never reaches (a single tile, on the way to a position) answers that it is not
// reachable, and the page says so quietly until it is
async function analyse() {
  const asked = ++analysis.asked;  // only the latest question's answer is shown
  $("analysis-board").dataset.asked = asked;  // the answer shown is the latest once analysed == asked
  if (analysis.tiles.every((tile) => tile === 0)) return showAnalysis(asked, null);
  try {
    const answer = await api("POST", "/api/analyze", withDepth({board: analysis.tiles}, "analysis-depth"));
    if (asked === analysis.asked) showAnalysis(asked, answer);
  } catch (e) {
    if (asked !== analysis.asked) return;
    showAnalysis(asked, null);
    status("analysis-status", e.message, true);
  }
}

// an analysis shown, or none (null: an empty board, a refusal); its moves are null without a model on a board that
// is not reachable (reachable false: no value of the engine's, no exact one)
function showAnalysis(asked, answer) {
  if (answer !== null && answer.moves !== null) {
    showValues($("analysis-values"), answer.moves, answer.best, answer.exact ?? null);
  } else {
    $("analysis-values").replaceChildren();
  }
  $("analysis-best").textContent = answer?.best ? ARROWS[answer.best] + " " + answer.best : "\u2014";
  if (SOLVED && answer !== null) {
    showPerfect("analysis-perfect", "analysis-optimum", answer.exact);
  } else {
    $("analysis-perfect").textContent = "\u2014";
    $("analysis-optimum").textContent = "";
  }
  $("analysis-board").dataset.analysed = asked;
  $("analysis-board").dataset.reachable = answer?.reachable ?? "";
  status("analysis-status", "");
}

// every tile a board of the model may hold (GET /api/model's tiles: the game's, up to the largest its cells hold)
config.model.tiles.forEach((tile) => {
  const button = document.createElement("button");
  button.dataset.tile = tile;
  button.textContent = tile || "empty";
  button.setAttribute("aria-pressed", String(tile === analysis.tile));
  if (tile) {
    button.style.background = config.colours[config.levels[codeOf(tile)]];
    button.style.color = config.levels[codeOf(tile)] <= 2 ? "#776e65" : "#f9f6f2";
  }
  button.addEventListener("click", () => {
    analysis.tile = tile;
    $("palette").querySelectorAll("button").forEach((b) => b.setAttribute("aria-pressed", String(b === button)));
  });
  $("palette").appendChild(button);
});
analysis.cells.forEach((cell, i) => {
  cell.addEventListener("click", () => { analysis.tiles[i] = analysis.tile; showAnalysisBoard(); });
  cell.addEventListener("contextmenu", (e) => { e.preventDefault(); analysis.tiles[i] = 0; showAnalysisBoard(); });
});
$("analysis-clear").addEventListener("click", () => { analysis.tiles.fill(0); showAnalysisBoard(); });
$("analysis-from-game").addEventListener("click", () => {
  if (play.game) analysis.tiles = play.game.board.slice();
  showAnalysisBoard();
});
$("analysis-depth").addEventListener("change", analyse);
depthOptions($("analysis-depth"));
paintBoard(analysis.cells, analysis.tiles);

// ---- Replay: a record file, checked and replayed by the server, shown by the replay page's viewer --
const showReplay = replayViewer(() => tab === "replay" && !$("viewer").hidden);

// a file that cannot be replayed leaves nothing of the one before: no games listed, an empty board
function clearReplay() {
  if ($("play").textContent === "pause") $("play").click();  // the viewer's playback stops
  $("viewer").hidden = true;
  $("game").replaceChildren();
  $("about").textContent = "";
  document.querySelectorAll("#board .cell").forEach((cell) => paintCell(cell, 0, config));
  delete $("board").dataset.game;
}
$("replay-file").addEventListener("change", async (e) => {
  const file = e.target.files[0];
  if (!file) return;
  status("replay-status", `Replaying ${file.name} ...`);
  try {
    const text = (await file.text()).split("\n").slice(0, 100).join("\n");  // the server replays 100 games at most
    const data = await api("POST", "/api/replay", {records: text});
    $("viewer").hidden = false;
    showReplay(data);
    status("replay-status", `${file.name}: ${data.total} game${data.total > 1 ? "s" : ""}.`);
  } catch (error) {
    clearReplay();
    status("replay-status", `${file.name}: ${error.message}`, true);
  }
});

// ---- Tabs and keys --------------------------------------------------------------------------------
function show(name) {
  tab = name;
  for (const button of document.querySelectorAll("nav button")) {
    button.setAttribute("aria-selected", String(button.dataset.tab === name));
    $("panel-" + button.dataset.tab).hidden = button.dataset.tab !== name;
  }
}
document.querySelectorAll("nav button").forEach((b) => b.addEventListener("click", () => show(b.dataset.tab)));

document.addEventListener("keydown", (e) => {
  if (tab !== "play" || e.ctrlKey || e.metaKey || e.altKey || ["INPUT", "SELECT"].includes(e.target.tagName)) return;
  const actions = {h: hint, u: undo, Backspace: undo, n: () => { stopEngine(); newGame(); },
                   e: () => (play.engine ? stopEngine() : startEngine())};
  if (e.key in KEYS) playerMove(KEYS[e.key]);
  else if (e.key in actions) actions[e.key]();
  else return;
  e.preventDefault();
});

const m = config.model, on = `${m.game}${FULL ? "" : ` on the ${m.board} board`}`;
$("model").textContent = !MODEL ? `${m.solution.file}: perfect play, ${on}`
  : `${m.file}: ${m.network.label}, ${on}, ${m.method} values` + (SOLVED ? `; exact values from ${m.solution.file}` : "");
document.querySelectorAll(".model-only").forEach((e) => { e.hidden = !MODEL; });
document.querySelectorAll(".exact-only").forEach((e) => { e.hidden = !SOLVED; });
// the course's records (the record link, the Replay tab) hold 4x4 games: no record of a game on another board
if (!FULL) {
  $("record-link").hidden = true;
  $("replay-board").textContent = `${MODEL ? "This model plays" : "This server plays perfectly on"} the ${m.board} `
    + "board; record files hold 4x4 games (the course's format), which the replay shows on the 4x4 board.";
  $("replay-board").hidden = false;
  $("replay-status").textContent = "Open a record file (td2048 eval --record on a 4x4 model) to replay its games.";
}
newGame();
