"""Judging episode records as the course's judge does: replay every line, check the rules and the environment.

Each line is replayed from an empty board in the strict order place, place, (slide, place)*:
a slide must change the board, a placement must put code 1 or 2 on an empty cell, and after
the last action no slide may be legal. Recorded rewards, times and names are not trusted:
scores are recomputed by the replay. Then the environment is tested, each test two-sided
at significance 0.001 (a fair environment fails one in a thousand files):

- new-tile codes: the share of code 2 against p = 0.1 (binomial z-test, |z| < 3.29);
- placement cells: uniform over the empty cells, twice by chi-square: by the placed cell's
  rank among the empty cells (10 bins of rank / empty count), and by cell (16 cells, each
  expected sum over placements of 1 / empty count when empty).

Replays run on 5-bit boards (:mod:`td2048.games.wide`), so 2048 records with tiles past 32768
replay too.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from td2048.config import njit
from td2048.errors import TD2048Error
from td2048.games.bitboard import U64
from td2048.games.tiles import WIN_TILE, tile_value
from td2048.games.wide import wide_code, wide_max_code, wide_move, wide_row_table
from td2048.stats import percent

_Z_TWO_SIDED = 3.2905  # standard normal quantile for two-sided 0.001
_Z_ONE_SIDED = 3.0902  # for the upper tail of chi-square at 0.001 (Wilson-Hilferty)
MIN_PLACEMENTS_FOR_TESTS = 2000
RANK_BINS = 10

_NAME = r"[^:@|#\[\]()\s]+"
_LINE = re.compile(rf"({_NAME}):({_NAME})@(\d+)\|(.*)\|({_NAME})@(\d+)")
_ACTION = re.compile(r"(?:#([A-Za-z])|([0-9A-Fa-f])([0-9]))(?:\[(\d+)\])?(?:\((\d+)\))?")

PLACE, SLIDE = 0, 1
OK, BAD_ORDER, ILLEGAL_SLIDE, BAD_CODE, OCCUPIED, NOT_OVER, ENDS_WITH_SLIDE = range(7)
_VIOLATIONS = {
    BAD_ORDER: "action out of order (expected place, place, then slide and place alternately)",
    ILLEGAL_SLIDE: "illegal slide (it does not change the board)",
    BAD_CODE: "illegal tile (only codes 1 and 2 may be placed)",
    OCCUPIED: "placement on an occupied cell",
    NOT_OVER: "game ended unexpectedly (a slide is still legal)",
    ENDS_WITH_SLIDE: "game ended unexpectedly (the last action is a slide, not a placement)",
}


class RecordFormatError(TD2048Error):
    """A line that does not follow the record grammar."""


@dataclass
class ParsedFile:
    kinds: np.ndarray  # PLACE or SLIDE per action, all episodes one after another
    args: np.ndarray  # cell (placements) or direction (slides)
    codes: np.ndarray  # placed code (placements)
    starts: np.ndarray  # index of each episode's first action; one more at the end
    texts: list[str] = field(default_factory=list)  # each action as written, for messages
    line_numbers: list[int] = field(default_factory=list)
    durations_ms: int = 0
    player_ms: int = 0
    env_ms: int = 0


def parse_records(path: str | Path) -> ParsedFile:
    path = Path(path)
    try:
        text = path.read_text(encoding="ascii")
    except FileNotFoundError:
        raise TD2048Error(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise TD2048Error(f"{path}: cannot read ({e})") from None
    return parse_record_text(text, path)


def parse_record_text(text: str, name: str | Path = "records") -> ParsedFile:
    """The records of ``text`` (a file's contents; ``name`` names it in the error of a file without episodes).

    Raises
    ------
    RecordFormatError
        A line that does not follow the grammar, or no episode at all.
    """
    kinds, args, codes, starts, texts, numbers = [], [], [], [], [], []
    durations = player_ms = env_ms = 0
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
        if not line:
            break  # a reader stops at the first empty line
        m = _LINE.fullmatch(line)
        if not m:
            raise RecordFormatError(f"line {number}: truncated or malformed (expected "
                                    "PLAYER:ENV@TICK|actions|WINNER@TOCK)")
        tick, middle, tock = int(m.group(3)), m.group(4), int(m.group(6))
        starts.append(len(kinds))
        numbers.append(number)
        pos = 0
        while pos < len(middle):
            a = _ACTION.match(middle, pos)
            if not a:
                if middle[pos] == "#" and pos + 1 < len(middle):
                    raise RecordFormatError(f"line {number}: unknown move letter {middle[pos + 1]!r} "
                                            f"at action {len(kinds) - starts[-1]}")
                raise RecordFormatError(f"line {number}: cannot read action {len(kinds) - starts[-1]} at "
                                        f"{middle[pos:pos + 12]!r}")
            letter, cell, code, _reward, ms = a.groups()
            if letter is not None:
                if letter not in "URDL":
                    raise RecordFormatError(f"line {number}: unknown move letter {letter!r} "
                                            f"at action {len(kinds) - starts[-1]}")
                kinds.append(SLIDE)
                args.append("URDL".index(letter))
                codes.append(0)
                player_ms += int(ms or 0)
            else:
                kinds.append(PLACE)
                args.append(int(cell, 16))
                codes.append(int(code))
                env_ms += int(ms or 0)
            texts.append(a.group(0))
            pos = a.end()
        durations += tock - tick
    starts.append(len(kinds))
    if len(numbers) == 0:
        raise RecordFormatError(f"{name}: no episodes")
    return ParsedFile(np.array(kinds, np.int8), np.array(args, np.int8), np.array(codes, np.int8),
                      np.array(starts, np.int64), texts, numbers, durations, player_ms, env_ms)


@njit
def _replay(table, kinds, args, codes, starts, scores, max_codes, ranks, empties, cells, expected_cells,
            placed_codes, violation):
    """Replay every episode; stop at the first violation (violation = [kind, episode, action, lo, hi])."""
    placement = 0
    for e in range(starts.shape[0] - 1):
        board = (U64(0), U64(0))
        score = 0
        first, last = starts[e], starts[e + 1]
        for i in range(first, last):
            k = i - first
            expected = PLACE if k < 2 or (k % 2) == 1 else SLIDE
            if kinds[i] != expected:
                violation[0], violation[1], violation[2] = BAD_ORDER, e, k
                violation[3], violation[4] = np.int64(board[0]), np.int64(board[1])
                return placement
            if kinds[i] == SLIDE:
                after, reward = wide_move(table, board, args[i], 0)
                if after == board:
                    violation[0], violation[1], violation[2] = ILLEGAL_SLIDE, e, k
                    violation[3], violation[4] = np.int64(board[0]), np.int64(board[1])
                    return placement
                board = after
                score += reward
            else:
                cell = args[i]
                if codes[i] != 1 and codes[i] != 2:
                    violation[0], violation[1], violation[2] = BAD_CODE, e, k
                    violation[3], violation[4] = np.int64(board[0]), np.int64(board[1])
                    return placement
                if wide_code(board, cell) != 0:
                    violation[0], violation[1], violation[2] = OCCUPIED, e, k
                    violation[3], violation[4] = np.int64(board[0]), np.int64(board[1])
                    return placement
                n_empty = 0
                rank = 0
                for c in range(16):
                    if wide_code(board, c) == 0:
                        if c < cell:
                            rank += 1
                        n_empty += 1
                for c in range(16):
                    if wide_code(board, c) == 0:
                        expected_cells[c] += 1.0 / n_empty
                ranks[placement] = rank
                empties[placement] = n_empty
                cells[placement] = cell
                placed_codes[placement] = codes[i]
                placement += 1
                board = (board[0] | (U64(codes[i]) << U64(4 * cell)), board[1])
        n = last - first
        if n > 0 and (n - 2) % 2 == 1:
            violation[0], violation[1], violation[2] = ENDS_WITH_SLIDE, e, n - 1
            violation[3], violation[4] = np.int64(board[0]), np.int64(board[1])
            return placement
        for d in range(4):
            after, _ = wide_move(table, board, d, 0)
            if after != board:
                violation[0], violation[1], violation[2] = NOT_OVER, e, n - 1
                violation[3], violation[4] = np.int64(board[0]), np.int64(board[1])
                return placement
        scores[e] = score
        max_codes[e] = wide_max_code(board)
    return placement


def chi_square_critical(df: int, z: float = _Z_ONE_SIDED) -> float:
    """Upper quantile of chi-square (Wilson-Hilferty), at the judge's significance."""
    h = 2.0 / (9.0 * df)
    return df * (1.0 - h + z * math.sqrt(h)) ** 3


def chi_square(observed: np.ndarray, expected: np.ndarray) -> tuple[float, int]:
    keep = expected > 0
    stat = float(((observed[keep] - expected[keep]) ** 2 / expected[keep]).sum())
    return stat, int(keep.sum()) - 1


@dataclass
class Verdict:
    ok: bool
    message: str  # the first violation, or the report
    episodes: int = 0


def board_picture(lo: int, hi: int, game: str) -> str:
    codes = [((lo >> (4 * i)) & 0xF) | (((hi >> i) & 1) << 4) for i in range(16)]
    rows = []
    for r in range(4):
        rows.append("\t" + " ".join(f"{tile_value(game, c) if c else '.':>6}" for c in codes[4 * r:4 * r + 4]))
    return "\n".join(rows)


@dataclass
class RuleCheck:
    """What the replay of a record file under a game's rules found (see :func:`_replay`)."""

    scores: np.ndarray  # per episode
    max_codes: np.ndarray
    ranks: np.ndarray  # per placement: its rank among the empty cells, their count, its cell and code
    empties: np.ndarray
    cells: np.ndarray
    placed_codes: np.ndarray
    expected_cells: np.ndarray  # placements each cell should get, were they uniform over the empty cells
    violation: str | None = None  # the first rule broken: "line L, action K (text): what [game rules]"
    where: tuple[int, int] | None = None  # its (episode, action)
    board: str = ""  # the board there, as a picture


def check_rules(parsed: ParsedFile, game: str) -> RuleCheck:
    """Replay every episode from an empty board under ``game``'s rules (the judge's first test)."""
    episodes = len(parsed.line_numbers)
    n_place = int((parsed.kinds == PLACE).sum())
    check = RuleCheck(np.zeros(episodes, np.int64), np.zeros(episodes, np.int64),
                      *(np.zeros(n_place, np.int64) for _ in range(4)), np.zeros(16, np.float64))
    violation = np.zeros(5, np.int64)
    _replay(wide_row_table(game), parsed.kinds, parsed.args, parsed.codes, parsed.starts, check.scores,
            check.max_codes, check.ranks, check.empties, check.cells, check.expected_cells, check.placed_codes,
            violation)
    if violation[0] != OK:
        kind, e, k = int(violation[0]), int(violation[1]), int(violation[2])
        text = parsed.texts[parsed.starts[e] + k] if k < parsed.starts[e + 1] - parsed.starts[e] else ""
        check.violation = f"line {parsed.line_numbers[e]}, action {k} ({text}): {_VIOLATIONS[kind]} [{game} rules]"
        check.where = (e, k)
        check.board = board_picture(int(violation[3]) & (2**64 - 1), int(violation[4]), game)
    return check


def judge_file(path: str | Path, game: str = "2584") -> Verdict:
    """Replay and test a record file; the verdict's message is what the judge prints."""
    try:
        parsed = parse_records(path)
    except RecordFormatError as e:
        return Verdict(False, f"{path}: {e}")
    episodes = len(parsed.line_numbers)
    n_actions = len(parsed.kinds)
    check = check_rules(parsed, game)
    if check.violation is not None:
        return Verdict(False, f"{path}: {check.violation}\n{check.board}", episodes)
    scores, max_codes, ranks, empties, cells = check.scores, check.max_codes, check.ranks, check.empties, check.cells
    placed_codes, expected_cells, n_place = check.placed_codes, check.expected_cells, len(check.placed_codes)

    problems = []
    if parsed.durations_ms <= 0:
        problems.append("the episodes' total time (sum of TOCK - TICK) is 0 ms: real timestamps are required")
    notes = []
    if n_place >= MIN_PLACEMENTS_FOR_TESTS:
        twos = int((placed_codes == 2).sum())
        z = (twos - 0.1 * n_place) / math.sqrt(0.09 * n_place)
        if abs(z) > _Z_TWO_SIDED:
            problems.append(f"new tiles: {twos / n_place:.4%} are code 2, not consistent with 10% "
                            f"(z = {z:.1f} over {n_place} placements)")
        bins = np.minimum(RANK_BINS * ranks // empties, RANK_BINS - 1)
        observed = np.bincount(bins, minlength=RANK_BINS).astype(float)
        expected = np.zeros(RANK_BINS)
        for n_empty, count in zip(*np.unique(empties, return_counts=True), strict=True):
            per_rank = np.minimum(RANK_BINS * np.arange(n_empty) // n_empty, RANK_BINS - 1)
            expected += count * np.bincount(per_rank, minlength=RANK_BINS) / n_empty
        for name, obs, exp in (("rank among the empty cells", observed, expected),
                               ("cell", np.bincount(cells, minlength=16).astype(float), expected_cells)):
            stat, df = chi_square(obs, exp)
            if df > 0 and stat > chi_square_critical(df):
                problems.append(f"placements are not uniform over the empty cells (by {name}: chi-square "
                                f"{stat:.1f} with {df} df, critical {chi_square_critical(df):.1f})")
    else:
        notes.append(f"only {n_place} placements: too few to test the environment (needs {MIN_PLACEMENTS_FOR_TESTS})")
    if problems:
        return Verdict(False, f"{path}: " + "; ".join(problems), episodes)

    report = course_block(game, scores, max_codes, n_actions, parsed.durations_ms,
                          int((parsed.kinds == SLIDE).sum()), parsed.player_ms, n_place, parsed.env_ms)
    win = WIN_TILE[game]
    reached = int((np.array([tile_value(game, c) for c in max_codes]) >= win).sum())
    report += f"{win} reached in {percent(reached / episodes)} of {episodes} episodes\n"
    if episodes < 1000:
        notes.append("the course grades at least 1000 episodes")
    report += "".join(f"note: {n}\n" for n in notes)
    return Verdict(True, report, episodes)


def _speed(count: int, ms: int) -> str:
    return "inf" if ms <= 0 else str(int(count * 1000 / ms))


def course_block(game, scores, max_codes, actions, total_ms, slides, player_ms, places, env_ms) -> str:
    """The course framework's statistics block: header, one row per largest-tile class, a blank line."""
    n = len(scores)
    lines = [f"{n}\tavg = {int(scores.mean())}, max = {int(scores.max())}, ops = {_speed(actions, total_ms)} "
             f"({_speed(slides, player_ms)}|{_speed(places, env_ms)})"]
    counts = np.bincount(max_codes, minlength=32)
    reached = n
    for code in range(32):
        if counts[code]:
            lines.append(f"\t{tile_value(game, code)}\t{percent(reached / n)}\t({percent(counts[code] / n)})")
        reached -= counts[code]
    return "\n".join(lines) + "\n\n"
