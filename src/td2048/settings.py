"""What a training run is asked to do, checked before anything is allocated or compiled.

:class:`TrainSettings` (its schedules of alpha, exploration and snapshots read by :mod:`td2048.schedules`)
describes a run; its rules (each option in range, which go together) are :mod:`td2048.settings_checks`'s. It
makes the :class:`td2048.learning_options.LearningOptions` its learner learns by, and the
:class:`td2048.start_over.StartChecks` its starts are checked by. This module is plain Python and NumPy: the CLI
checks its options here without loading Numba, so a mistyped option gets its one-line error in a tenth of a
second. How a player searches is :mod:`td2048.search_settings`'s; what runs the settings is elsewhere:
:mod:`td2048.training` and :mod:`td2048.learn` train, :mod:`td2048.play` plays.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from td2048.config import (
    DEFAULT_ALPHA,
    DEFAULT_BLOCK,
    DEFAULT_EPISODES,
    DEFAULT_MEMORY_LIMIT,
    DEFAULT_NETWORK,
    DEFAULT_SNAPSHOT_EVERY,
    DEFAULT_SYNC_SECONDS,
    DEFAULT_TC_ALPHA,
)
from td2048.errors import TD2048Error
from td2048.games.shape import BoardShape
from td2048.games.tiles import WIN_TILE, tile_code
from td2048.learning_options import LearningOptions
from td2048.network import Network
from td2048.schedules import alpha_at, duration_seconds
from td2048.settings_checks import check_settings
from td2048.spec import NetworkSpec, parse_network, parse_stages
from td2048.start_over import MAX_STARTS, StartChecks

TIME_LIMIT_SLACK = 0.01
"""The share of ``--time-limit`` within which a run has reached it (:meth:`TrainSettings.time_left`)."""
MERGE_OFF = "off"  # --merge-every's word for no copies: TD's threads on one table


def merge_off(value) -> bool:
    """Whether a --merge-every value (from the command line or a sweep file) is :data:`MERGE_OFF`."""
    return isinstance(value, str) and value.strip().lower() == MERGE_OFF


@dataclass
class TrainSettings:
    """Everything that defines a training run (saved first in the run directory, checked by :meth:`validate`).

    Parameters
    ----------
    network : str
        A preset name (``4x6``, the default) or hex tuples (``012345,456789``).
    isomorphisms : int or None
        1, 4 or 8; None: the preset's default (8 for custom tuples).
    game : str
        ``"2048"`` or ``"2584"`` (Fibonacci).
    clamp : int or None
        K: feature codes min(code, K); None: 16**n tables (2048), K = 21 (2584).
    cells : int or None
        Bits per cell: 2048 plays on 4 (up to 32768, fastest) or 5; 2584 on 5.
    episodes : int
        Episodes to train in all (a resumed run counts those done).
    alpha : float
        Learning rate, split over tuples x isomorphisms.
    update : str
        ``"backward"``: after each episode, last move first; ``"forward"``: online.
    seed : int or None
        The random seed; None: drawn at the start and recorded.
    block : int
        Episodes per statistics block (one compiled call).
    threads : int
        Episodes played at once, all on the network's weights (TD with ``merge_every``: each thread on a copy of
        them); only 1 is reproducible.
    snapshot_every : int or str
        Episodes (``10000``) or training time (``"5m"``, ``"30s"``, ``"1h"``) between snapshots.
    memory_limit : int
        Bytes of weights allowed.
    init : str or None
        Model file to start from instead of zero weights.
    lam : float
        Lambda of the lambda-returns (backward updates): 0 is TD(0), 1 Monte Carlo.
    nstep : int
        n of n-step returns instead (backward updates); 0: use lambda.
    alpha_schedule : str
        ``const``, ``step:A@E,A@E,...`` or ``invsqrt:T`` (alpha / sqrt(1 + episodes / T)); see :func:`alpha_at`.
    explore : str
        Epsilon-greedy schedule: ``none``, ``const:E``, ``linear:E0:E1:N`` or ``exp:E0:R:N`` (see
        :func:`~td2048.schedules.exploration`).
    method : str
        What V values: ``"afterstate"`` (after the move) or ``"state"`` (after the new tile).
    weight_bits : int
        32: float32 weights; 16: 16-bit ones (half the memory, faster on large networks; TD on 2048's afterstate
        values, one table: see :class:`td2048.network.Network`). Models are saved as float32 either way.
    merge_every : float or None
        TD with threads: None, the threads write one table (as TC's always do); seconds: each thread learns
        on a copy of the weights, and the copies are merged every that many seconds of training.
    optimistic : float
        OTD: every board starts at this value (each weight at it / features); 0: zeros.
    stages : str or None
        Multistage: thresholds as tiles, ``"16384"``, ``"8192,16384"`` or ``"16384+8192"``; None: one stage.
    promote : bool
        Multistage: a stage entered for the first time starts from the previous one's weights.
    promote_at : int or None
        Multistage: the stages learn apart from fresh weights until this episode of each start, where each stage
        after the first becomes a copy of the one before it (its TC rates fresh at :meth:`promoted_tc_rate`);
        None: ``promote`` rules.
    tc_from : str or None
        Temporal coherence from this episode on (``"0"``, ``"900000"``, ``"90%"``); None: never.
    tc_alpha : float
        TC's meta rate (split over the features as alpha is).
    tc_start_rate : float or None
        Each weight's first TC rate, in (0, 1] (see :func:`td2048.network.fresh_accumulators`); None: set by
        :meth:`validate` to :meth:`default_tc_start_rate`.
    tc_records : bool
        TC on this machine's threads learns on records, each weight beside its two accumulators (see
        :mod:`td2048.kernels.records`): faster on threads on some processors, slower on others; the same
        learning.
    restarts : float
        Share of episodes started from boards kept from earlier games.
    restart_tile : int or None
        A game's first board with this tile is kept for restarts; None: see :meth:`restart_code`.
    restart_beside : int or None
        Restarts: the kept board is the first that also holds a second tile of at least this one; None: any.
    workers : int
        Ray workers that learn at once, each on ``threads`` threads (``td2048 train --ray``); 0: this process.
    sync_every : float
        With Ray workers: seconds of learning between their syncs.
    board : str
        The board, ``RxC`` (``3x3``; see :mod:`td2048.games.shape`); ``network`` names a preset or cells of it.
    exact : str or None
        A solution file of the run's board and game (``td2048 solve --out``): every ``exact_every`` blocks, and
        after the last, the network's greedy policy is valued exactly against it (:mod:`td2048.solve.policy`)
        and the figures go into the block's log line; None: never. Read by ``td2048 train``
        (:class:`td2048.run.TrainingRun`); :func:`td2048.train` refuses it.
    exact_every : int or None
        Blocks between exact valuations (every ``exact_every`` x ``block`` episodes); None: 1 with ``exact``.
    target : str
        What an update moves V toward (:data:`~td2048.learning_options.TARGETS`): ``"sample"``, the next move's
        r + V; ``"expected"``, the mean over every new tile of the best move's r + V, each update moving V by
        exactly alpha x the error;
        ``"expected-all"``: the same for every legal move's afterstate of each position played (forward updates);
        ``"ranked"``: expected targets for the move played, and each position's moves ranked by their expected
        targets (the regret loss of :func:`td2048.kernels.targets.regret_update`, with the network's own look
        one move further in place of perfect play's values; forward updates).
    teacher : str or None
        Distillation: a solution file of the run's board and game (``td2048 solve --out``); each position played
        moves toward perfect play's exact value, by exactly alpha x the error. None: learning from play alone.
    teacher_moves : float
        With ``teacher``: the share of episodes that follow perfect play's moves (the others the network's).
    teacher_loss : str
        With ``teacher``: ``"value"``, each move's afterstate moves toward its exact value; ``"regret"``, only the
        moves' ranking is learned: perfect play's move must lead each other move by what that move loses against
        it (a cost-sensitive hinge loss; on the network's own games its sum bounds the exact gap).
    endgame : str or None
        An endgame's table of the run's board (``td2048 solve --fixed ... --goal ...``): in the training games
        it chooses the moves of its endgame (as ``td2048 eval --endgame`` does), and the network learns from
        them as played, so that its values before the endgame learn what the table makes of it. None: the
        network plays every move.
    endgame_starts : float
        With ``endgame``: the share of the episodes not restarted that start from the endgame's start (its fixed
        tiles in an orientation drawn at random, two new tiles on the free cells), so that the table's games,
        and the play after its goal, are trained from the first block on (left out of the statistics, as
        restarts are).
    pretrain : str or None
        ``"NETWORK:EPISODES"``: before this run, a smaller network (a preset or hex tuples of the same board)
        is trained by TD(0) for EPISODES episodes (:meth:`pretrain_settings`), and every weight of this run's
        network of one tuple (the whole board, or most of it) starts from that network's value of the position
        that reads it (:meth:`td2048.network.Network.start_from`);
        None: no pretraining.
    start_over_below : float or None
        A start that does not learn: when the block that ends at ``start_over_below_at`` episodes averages less
        than this score, its weights (and TC's accumulators and the boards kept for restarts) are thrown away and
        the run starts over from fresh weights, its random stream going on, at most ``max_starts`` starts in all
        (the last is kept whatever it scores). For methods whose starts split into good and bad ones (the 4x3
        recipe's). None: one start.
    start_over_below_at : int or None
        The episode, of each start, whose block ``start_over_below`` reads (a block ends there); None:
        ``start_over_at``.
    start_over_without : int or None
        A start that has not reached a tile: when no game of its first ``start_over_without_at`` episodes (of
        those played from the start, not restarted) built this tile, the start is thrown away as with
        ``start_over_below``. With both, a start must pass both, each at its episode, and is thrown away at the
        first it fails. On 4x3 the starts that build a 4096 in their first 100,000 episodes are the ones whose
        second stage learns it early. None: no such check.
    start_over_without_at : int or None
        The episode, of each start, by which ``start_over_without``'s tile must be built; None: ``start_over_at``.
    start_over_corner_below : float or None
        A start that builds its tiles off the corners: with ``restarts``, when fewer than this share of the
        boards kept for restarts in the block that ends at ``start_over_corner_below_at`` episodes (each game's
        first board with the restart tile) hold their largest tile in a corner, the start is thrown away as
        with ``start_over_below``. On 4x3 the starts settle within 30,000 to 50,000 episodes into building the
        2048 in a corner (most of the games) or off the corners (a corner in 5% to 30%; such starts build no
        4096): this check tells them apart at half the cost of a tile's. None: no such check.
    start_over_corner_below_at : int or None
        The episode, of each start, whose block ``start_over_corner_below`` reads; None: ``start_over_at``.
    start_over_at : int or None
        With ``start_over_below``, ``start_over_without`` or ``start_over_corner_below``: the episode, of each
        start, where each check that names none of its own is made (a block ends there); None: the end of the
        first block.
    max_starts : int
        With a start check: the most starts the run makes (the last is kept whatever it scores).
    time_limit : str or None
        The most training time the run takes, ``30m``, ``1h``, ``90s``: the blocks' seconds, the starts thrown
        away included (not the time to start, snapshot or save); the run ends at ``episodes`` or there, whichever
        comes first, its last block cut to fit at the pace of the block before. None: no limit.
    """

    network: str = DEFAULT_NETWORK
    isomorphisms: int | None = None
    game: str = "2048"
    clamp: int | None = None
    cells: int | None = None
    episodes: int = DEFAULT_EPISODES
    alpha: float = DEFAULT_ALPHA
    update: str = "backward"
    seed: int | None = None
    block: int = DEFAULT_BLOCK
    threads: int = 1
    snapshot_every: int | str = DEFAULT_SNAPSHOT_EVERY
    memory_limit: int = DEFAULT_MEMORY_LIMIT
    init: str | None = None
    lam: float = 0.0
    nstep: int = 0
    alpha_schedule: str = "const"
    explore: str = "none"
    method: str = "afterstate"
    weight_bits: int = 32
    merge_every: float | None = None
    optimistic: float = 0.0
    stages: str | None = None
    promote: bool = True
    promote_at: int | None = None
    tc_from: str | None = None
    tc_alpha: float = DEFAULT_TC_ALPHA
    tc_start_rate: float | None = None
    tc_records: bool = False
    restarts: float = 0.0
    restart_tile: int | None = None
    restart_beside: int | None = None
    workers: int = 0
    sync_every: float = DEFAULT_SYNC_SECONDS
    board: str = "4x4"
    exact: str | None = None
    exact_every: int | None = None
    target: str = "sample"
    teacher: str | None = None
    teacher_moves: float = 0.5
    teacher_loss: str = "value"
    endgame: str | None = None
    endgame_starts: float = 0.0
    pretrain: str | None = None
    start_over_below: float | None = None
    start_over_below_at: int | None = None
    start_over_without: int | None = None
    start_over_without_at: int | None = None
    start_over_corner_below: float | None = None
    start_over_corner_below_at: int | None = None
    start_over_at: int | None = None
    max_starts: int = MAX_STARTS
    time_limit: str | None = None

    def validate(self) -> None:
        """Check every setting (:func:`td2048.settings_checks.check_settings`; a 2584 run without a clamp gets the
        default clamp).

        Raises
        ------
        TD2048Error
            The first setting that is out of range or malformed, in one line naming its option.
        """
        check_settings(self)

    def start_checks(self) -> StartChecks:
        """The run's start checks, as :func:`td2048.training.train_blocks` asks them (false without one).

        Returns
        -------
        StartChecks
            The ``start_over_*`` settings and ``max_starts``, with the run's game and block.

        Raises
        ------
        TD2048Error
            When one of them is out of range or malformed.
        """
        return StartChecks(game=self.game, block=self.block, below=self.start_over_below,
                           below_at=self.start_over_below_at, without=self.start_over_without,
                           without_at=self.start_over_without_at, corner_below=self.start_over_corner_below,
                           corner_below_at=self.start_over_corner_below_at, at=self.start_over_at,
                           max_starts=self.max_starts)

    def time_limit_seconds(self) -> float | None:
        """``time_limit`` in seconds.

        Returns
        -------
        float or None
            The seconds; None without a limit.

        Raises
        ------
        TD2048Error
            On a limit that is not a time (``30m``, ``1h``, ``90s``).
        """
        if self.time_limit is None:
            return None
        seconds = duration_seconds(self.time_limit)
        if seconds is None:
            raise TD2048Error(f"--time-limit must be a time such as 90s, 30m or 1.5h, not {self.time_limit!r}")
        return seconds

    def time_left(self, seconds: float) -> float | None:
        """The training time left to a run that has trained ``seconds``, by ``time_limit``.

        Parameters
        ----------
        seconds : float
            The run's training time so far.

        Returns
        -------
        float or None
            Seconds, 0 once less than :data:`TIME_LIMIT_SLACK` of the limit is left (a last block cut to the
            time left ends that close to it); None without a limit.
        """
        limit = self.time_limit_seconds()
        if limit is None:
            return None
        left = limit - seconds
        return left if left > TIME_LIMIT_SLACK * limit else 0.0


    def learning_options(self) -> LearningOptions:
        """How the run learns from every episode, as every runner takes it.

        Returns
        -------
        LearningOptions
            The update, returns, exploration, promotion, restarts (with :meth:`restart_code`), TC's first rate,
            target, teacher's share of moves and endgame starts; of checked settings (:meth:`validate` sets
            ``tc_start_rate``).

        Raises
        ------
        TD2048Error
            When one of them is out of range or malformed.
        """
        return LearningOptions(update=self.update, lam=self.lam, nstep=self.nstep, explore=self.explore,
                               promote=self.promote and self.promote_at is None, restarts=self.restarts,
                               restart_code=self.restart_code(), restart_beside=self.restart_beside_code(),
                               tc_start_rate=self.tc_start_rate, target=self.target, teacher_moves=self.teacher_moves,
                               endgame_starts=self.endgame_starts,
                               teacher_loss=self.teacher_loss)

    def pretrain_plan(self) -> tuple[str, int]:
        """``pretrain`` read: the network to pretrain and its episodes.

        Returns
        -------
        tuple of (str, int)
            The network (a preset name or hex tuples) and the episodes of TD(0) it is trained for.

        Raises
        ------
        TD2048Error
            On text that is not ``NETWORK:EPISODES`` with a positive number of episodes.
        """
        network, _, episodes = str(self.pretrain).strip().rpartition(":")
        try:
            count = int(episodes.replace("_", ""))
        except ValueError:
            count = 0
        if not network or count < 1:
            raise TD2048Error(f"--pretrain must be NETWORK:EPISODES, such as 2x6:3000000, not {self.pretrain!r}")
        return network, count

    def pretrain_settings(self) -> TrainSettings:
        """The settings of the pretraining run: TD(0) with the default alpha and backward updates, on this run's
        board, game, cells, method, seed, threads, blocks, snapshots, memory limit and exact valuations.

        Returns
        -------
        TrainSettings
            Checked settings; the seed is this run's (None while it is still to be drawn).
        """
        network, episodes = self.pretrain_plan()
        settings = TrainSettings(network=network, game=self.game, cells=self.cells, episodes=episodes,
                                 seed=self.seed, block=self.block, threads=self.threads,
                                 snapshot_every=self.snapshot_every, memory_limit=self.memory_limit,
                                 method=self.method, board=self.board, exact=self.exact,
                                 exact_every=self.exact_every)
        settings.validate()
        return settings

    def default_tc_start_rate(self) -> float:
        """Each weight's first TC rate when none is given: TC goes on at the step of the TD before it.

        A TC phase that follows learned weights (a TD phase of this run, ``tc_from`` after episode 0, or
        a model given by ``init``) starts every weight at ``alpha / tc_alpha`` (``alpha`` as the schedule
        has it at the switch), so that its first steps are the TD phase's, not ``tc_alpha``'s whole step,
        which throws away much of what the TD phase learned (measured: Experiments, "Starting rate of the
        TC phase"). TC from the first episode of fresh weights starts at 1, as TDL2048+'s does.

        Returns
        -------
        float
            The rate, in (0, 1]; 1 without TC.
        """
        start = self.tc_start()
        if start is None or (start == 0 and self.init is None):
            return 1.0
        return min(1.0, alpha_at(self.alpha_schedule, self.alpha, start) / self.tc_alpha)

    def promoted_tc_rate(self) -> float:
        """The first TC rate of the weights that ``promote_at`` copies: learned weights, so the step of TD at that
        episode over ``tc_alpha`` (as :meth:`default_tc_start_rate` starts TC after learned weights), not
        ``tc_alpha``'s whole step, which throws much of the copy away.

        Returns
        -------
        float
            The rate, in (0, 1].
        """
        return min(1.0, alpha_at(self.alpha_schedule, self.alpha, self.promote_at or 0) / self.tc_alpha)

    def spec(self) -> NetworkSpec:
        """The network these settings describe.

        Returns
        -------
        NetworkSpec
            Its tuples, isomorphisms, clamp and stages.
        """
        return parse_network(self.network, self.isomorphisms, self.clamp, parse_stages(self.stages, self.game),
                             BoardShape.parse(self.board))

    def new_network(self) -> Network:
        """A network to train from scratch.

        Returns
        -------
        Network
            Zero weights, or every board at ``optimistic``.
        """
        network = Network(self.spec(), memory_limit=self.memory_limit, game=self.game, cell_bits=self.cells,
                          method=self.method, weight_bits=self.weight_bits)
        if self.optimistic > 0:
            network.fill_optimistic(self.optimistic)
        return network

    def tc_start(self) -> int | None:
        """The first episode of the TC phase: ``tc_from`` as an episode or a share of ``episodes``.

        Returns
        -------
        int or None
            The episode; None without TC.

        Raises
        ------
        TD2048Error
            On a malformed ``tc_from``.
        """
        if self.tc_from is None:
            return None
        text = str(self.tc_from).strip()
        try:
            if text.endswith("%"):
                share = float(text[:-1])
                if 0 <= share <= 100:
                    return round(self.episodes * share / 100)
            elif int(text) >= 0:
                return int(text)
        except ValueError:
            pass
        raise TD2048Error(f"--tc-from must be an episode (900000) or a share of --episodes (90%), not {self.tc_from!r}")

    def restart_code(self) -> int:
        """Code of the tile whose first board each game keeps for restarts.

        Returns
        -------
        int
            ``restart_tile``'s code, else the largest tile of the first stage threshold, else the game's
            winning tile.

        Raises
        ------
        TD2048Error
            When ``restart_tile`` is not a tile of the game.
        """
        if self.restart_tile is None:
            stages = parse_stages(self.stages, self.game)
            return stages[0].bit_length() - 1 if stages else tile_code(self.game, WIN_TILE[self.game])
        code = tile_code(self.game, self.restart_tile)
        if code is None:
            raise TD2048Error(f"--restart-tile must be a tile of {self.game}, not {self.restart_tile}")
        return code

    def restart_beside_code(self) -> int:
        """Code of the second tile a board kept for restarts must hold (``restart_beside``); 0: none needed.

        Returns
        -------
        int
            The code.

        Raises
        ------
        TD2048Error
            When ``restart_beside`` is not a tile of the game, or comes without restarts.
        """
        if self.restart_beside is None:
            return 0
        code = tile_code(self.game, self.restart_beside)
        if code is None:
            raise TD2048Error(f"--restart-beside must be a tile of {self.game}, not {self.restart_beside}")
        if self.restarts <= 0:
            raise TD2048Error("--restart-beside sets which boards restarts keep: add --restarts P")
        return code

    def to_dict(self) -> dict:
        """The settings as JSON (as ``settings.json`` holds them).

        Returns
        -------
        dict
            Every field by name.
        """
        return asdict(self)
