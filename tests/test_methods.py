"""The learning methods of the strongest agents: optimistic TD, temporal coherence, multistage TD with
weight promotion, restarts from kept boards, and runs made of phases (OTD, then TC).

Each update rule is checked against a written-out reference (plain Python, float32 weights, the
kernels' order of operations) on whole episodes, bit for bit, and on hand-worked updates."""

import json

import numpy as np
import pytest
from commands import assert_one_line_error, td2048
from test_learn import SMALL, ReferenceLearner

from td2048.config import DEFAULT_MEMORY_LIMIT
from td2048.games.bitboard import max_code
from td2048.io.model import load_model, save_model
from td2048.kernels import kernels_for
from td2048.kernels.merge import NO_TRACKING
from td2048.kernels.records import RECORD, pack_records, unpack_records
from td2048.learn import Learner
from td2048.learning_options import LearningOptions
from td2048.network import TC_START_EVIDENCE, Network, aligned_zeros, parse_network
from td2048.run import TrainingRun
from td2048.settings import TrainSettings
from td2048.spec import parse_stages
from td2048.training import train

TINY = np.finfo(np.float32).tiny
# The staged network of every episode test and the CLI test: each stage rule compiles a module of its
# own, so the rule of combined thresholds is checked on the hand-worked network only.
STAGES = "64"


class TCReference(ReferenceLearner):
    """Temporal coherence written out: each weight moves by u |E| / A, then E += u, A += |u|. Every weight is
    added in float64 (TC's kernels: see td2048.kernels.features)."""

    board_sum = float

    def __init__(self, net, rng_state, alpha):
        super().__init__(net, rng_state, alpha)
        self.acc = net.accumulators.copy()

    def add(self, i, u):
        rate = np.float32(np.abs(self.acc[2 * i]) / self.acc[2 * i + 1])
        self.w[i] = np.float32(self.w[i] + np.float32(u * rate))
        self.acc[2 * i] = np.float32(self.acc[2 * i] + u)
        self.acc[2 * i + 1] = np.float32(self.acc[2 * i + 1] + np.abs(u))


class StagedReference(ReferenceLearner):
    """Multistage written out: a board reads the tables of its stage (the number of thresholds at or
    below the OR of 1 << code over its cells); the first chosen afterstate of a new stage copies the
    previous stage's tables into it (promotion)."""

    def __init__(self, net, rng_state, alpha, promote=True):
        super().__init__(net, rng_state, alpha)
        self.promote = promote

    def stage(self, board):
        scale = 0
        for c in range(16):
            scale |= 1 << ((board >> (4 * c)) & 0xF)
        return sum(scale >= m for m in self.spec.stages)

    def indices(self, board):
        offset = self.stage(board) * self.spec.stage_weights
        return [[offset + i for i in group] for group in super().indices(board)]

    def greedy(self, board, value_of):
        """The greedy choice; the kernels promote right after choosing."""
        best = ReferenceLearner.greedy(board, value_of)
        if best is not None:
            self.chosen(best[1])
        return best

    def chosen(self, after):
        size, markers = self.spec.stage_weights, self.spec.stage_markers
        for k in range(1, self.stage(after) + 1):
            if self.promote and self.w[markers + k] == 0:
                self.w[markers + k] = 1.0
                self.w[k * size:(k + 1) * size] = self.w[(k - 1) * size:k * size]


def test_tc_updates_on_a_hand_worked_weight():
    """One weight (cell 0 of a one-feature network), alpha 1: targets 8, 4, 10 from 0.

    u = 8: rate 1 (E = A = tiny), w = 8, E = 8, A = 8; u = -4: rate 8/8, w = 4, E = 4, A = 12;
    u = 6: rate 4/12, w = 4 + 6/3 = 6, E = 10, A = 18."""
    net = Network(parse_network("0", isomorphisms=1))
    records = tc_records(net, net.start_accumulators())
    k = kernels_for(net.spec, tc=True, records=True)
    board = np.uint64(1)  # code 1 in cell 0: weight 1, record 1
    for target, (w, e, a) in ((8.0, (8, 8, 8)), (4.0, (4, 4, 12)), (10.0, (6, 10, 18))):
        assert k.td_update(records, NO_TRACKING, board, target, 1.0) == w
        assert tuple(records[RECORD:2 * RECORD]) == (w, e, a)
    assert records[1] == records[2] == TINY  # weights never updated keep their first rate, 1
    unpack_records(records, net.weights, net.accumulators)
    assert (net.weights[1], *net.accumulators[2:4]) == (6, 10, 18)


def tc_records(net, acc):
    """The network's weights and accumulators as TC's records (td2048.kernels.records)."""
    records = aligned_zeros(RECORD * net.weights.size)
    pack_records(net.weights, acc, records)
    return records


@pytest.mark.parametrize("mode", ["backward", "forward"])
def test_tc_on_records_and_on_the_networks_own_arrays_learns_the_same_bit_for_bit(mode):
    """A learner's TC on records (each weight beside its accumulators; asked for, and within its memory limit)
    and on the network's two arrays (by default, or records over the limit): the same episodes, weights and
    accumulators, a new stage's promotion included; and TD after TC goes on from what TC learned."""
    runs = []
    for records, limit in ((True, DEFAULT_MEMORY_LIMIT), (False, DEFAULT_MEMORY_LIMIT), (True, 1)):
        net = Network(parse_network(SMALL, stages=parse_stages(STAGES)))
        learner = Learner(net, seed=5, memory_limit=limit, tc_records=records)
        learner.run(10, 0.1, LearningOptions(update=mode))
        blocks = [learner.run(20, 1.0, LearningOptions(update=mode), tc=True) for _ in range(2)]
        assert (learner._records is not None) == (records and limit == DEFAULT_MEMORY_LIMIT)
        learner.merge()
        learned = net.weights.copy(), net.accumulators.copy()
        # TD again: on what TC learned, in the network's arrays
        blocks.append(learner.run(5, 0.1, LearningOptions(update=mode)))
        assert learner._records is None
        runs.append((blocks, learned, net.weights.copy()))
    (blocks, learned, after), *others = runs
    for blocks_split, learned_split, after_split in others:
        for a, b in zip(blocks, blocks_split, strict=True):
            assert np.array_equal(a.scores, b.scores) and np.array_equal(a.moves, b.moves)
        assert all(np.array_equal(a, b) for a, b in zip(learned, learned_split, strict=True))
        assert np.array_equal(after, after_split)
    assert learned[0][Network(parse_network(SMALL, stages=parse_stages(STAGES))).spec.stage_markers + 1] == 1.0
    assert not np.array_equal(after, learned[0])


def test_a_tc_start_rate_below_one_starts_every_weight_at_that_rate():
    """Rate 0.1: E = 30, A = 300 (TC_START_EVIDENCE) for every weight. Target 8 from 0, alpha 1: u = 8 at rate
    30/300, w = 0.8, E = 38, A = 308; target 4: u = 3.2 at rate 38/308."""
    net = Network(parse_network("0", isomorphisms=1))
    acc = net.start_accumulators(0.1)
    assert TC_START_EVIDENCE == 300 and np.all(acc[0::2] == np.float32(30)) and np.all(acc[1::2] == 300)
    assert net.start_accumulators(1.0) is acc  # the network's own accumulators are kept
    k = kernels_for(net.spec, tc=True)
    board = np.uint64(1)
    assert k.td_update(net.weights, acc, board, 8.0, 1.0) == np.float32(0.8)
    assert (acc[2], acc[3]) == (38, 308)
    u = np.float32(4.0 - np.float32(0.8))
    expected = np.float32(np.float32(0.8) + np.float32(u * np.float32(np.float32(38) / np.float32(308))))
    assert k.td_update(net.weights, acc, board, 4.0, 1.0) == expected
    assert (acc[0], acc[1]) == (np.float32(30), 300)  # a weight never updated keeps the start rate


def test_the_tc_start_rate_goes_on_at_the_td_step_after_learned_weights_and_at_1_from_fresh_ones(tmp_path):
    def rate(**given):
        settings = TrainSettings(**{"network": SMALL, "episodes": 1000, **given})
        settings.validate()
        return settings.tc_start_rate

    assert rate() == rate(tc_from="0") == rate(tc_from="0", optimistic=5000) == 1.0  # fresh weights: TDL2048+'s 1
    assert rate(tc_from="90%") == rate(tc_from="900", optimistic=5000) == pytest.approx(0.1)  # after TD: alpha / tc
    assert rate(tc_from="900", alpha=0.05, tc_alpha=0.5) == pytest.approx(0.1)
    assert rate(tc_from="900", alpha_schedule="step:0.2@0,0.02@500") == pytest.approx(0.02)  # alpha at the switch
    assert rate(tc_from="900", alpha=2.0) == 1.0  # never above 1
    assert rate(tc_from="900", tc_start_rate=1.0) == 1.0  # a rate given is kept
    model = tmp_path / "m.td2048"
    save_model(model, Network(parse_network(SMALL)))
    assert rate(tc_from="0", init=str(model), network=None) == pytest.approx(0.1)  # TC on a model's weights

    run = TrainingRun.create(tmp_path / "run", TrainSettings(network=SMALL, episodes=100, block=100, tc_from="50"))
    saved = json.loads((tmp_path / "run" / "settings.json").read_text())
    assert saved["tc_start_rate"] == pytest.approx(0.1)  # recorded as a number: a resumed run keeps it
    del saved["tc_start_rate"]  # a run made before the rate could be set started its TC at 1, and goes on so
    (tmp_path / "run" / "settings.json").write_text(json.dumps(saved))
    del run
    assert TrainingRun.resume(tmp_path / "run").settings.tc_start_rate == 1.0


class StagedTCReference(StagedReference, TCReference):
    """TC on a multistage network: the stages' tables, each weight with its own accumulators."""


@pytest.mark.parametrize("mode", ["backward", "forward"])
def test_tc_episodes_equal_the_reference_bit_for_bit(mode):
    """On the suite's staged network, whose TC kernels the CLI test also uses (one module less to compile);
    its stage 0 is the plain network."""
    net = Network(parse_network(SMALL, stages=parse_stages(STAGES)))
    learner = Learner(net, seed=21)
    learner.run(10, 0.1, LearningOptions(update=mode))  # TD first (OTD then TC starts TC on trained weights)
    learner.run(10, 1.0, LearningOptions(update=mode), tc=True)  # accumulators no longer fresh
    learner.merge()  # TC learns on records: into the network's arrays, where the reference starts
    reference = StagedTCReference(net, learner.rng_state, 1.0)
    block = learner.run(3, 1.0, LearningOptions(update=mode), tc=True)
    for e in range(3):
        assert reference.episode(mode) == (block.scores[e], block.moves[e])
    learner.merge()  # TC learned on records: into the network's arrays
    np.testing.assert_array_equal(reference.w, net.weights)
    np.testing.assert_array_equal(reference.acc, net.accumulators)


def test_optimistic_start_values_every_board_at_v():
    settings = TrainSettings(network=SMALL, optimistic=240000, episodes=5)
    net = settings.new_network()
    assert (net.weights == np.float32(15000)).all()  # 240000 / 16 features
    for board in (0x1, 0x21, 0xFEDCBA9876543210):
        assert net.value(board) == 240000
    learner = Learner(net, seed=3)  # then plain TD from there, as the reference does it
    reference = ReferenceLearner(net, learner.rng_state, alpha=0.1)
    block = learner.run(2, 0.1)
    assert [reference.episode("backward") for _ in range(2)] == list(zip(block.scores, block.moves))
    np.testing.assert_array_equal(reference.w, net.weights)


def test_stage_rule_and_promotion_on_a_hand_worked_network():
    """Cell 0 alone, stages at 64 and at 128+64: a board is in stage 0 below 64, 1 from 64, 2 once
    128 and 64 (or anything larger than 128 + 64) are on it."""
    spec = parse_network("0", isomorphisms=1, stages=parse_stages("64,128+64"))
    assert spec.stages == (1 << 6, (1 << 7) | (1 << 6)) and spec.n_weights == 3 * 16 + 3
    net = Network(spec)
    k = net.kernels

    def index(codes):
        return int(net.feature_indices(sum(c << (4 * i) for i, c in enumerate(codes)))[0])

    assert index([5]) == 5 and index([6]) == 16 + 6 and index([5, 7]) == 16 + 5 and index([7, 6]) == 32 + 7
    assert index([6, 8]) == 32 + 6  # 256 alone is above 128 + 64
    net.weights[:16] = np.arange(16)
    k.enter_stage(net.weights, NO_TRACKING, np.uint64(0x67))  # stage 2 at once: 1, then 2, are promoted
    assert (net.weights[16:32] == np.arange(16)).all() and (net.weights[32:48] == np.arange(16)).all()
    assert net.weights[48:].tolist() == [0, 1, 1]
    net.weights[:16] = 0
    k.enter_stage(net.weights, NO_TRACKING, np.uint64(0x67))  # entered once only
    assert (net.weights[16:32] == np.arange(16)).all()
    single = Network(parse_network("0", isomorphisms=1, stages=parse_stages("64,128")))  # the largest tile decides
    for codes, expected in (([5], 5), ([6], 16 + 6), ([5, 6], 16 + 5), ([7], 32 + 7), ([9, 1], 32 + 9)):
        assert int(single.feature_indices(sum(c << (4 * i) for i, c in enumerate(codes)))[0]) == expected


@pytest.mark.parametrize("mode, promote", [("backward", True), ("forward", True), ("backward", False)])
def test_multistage_episodes_equal_the_reference_bit_for_bit(mode, promote):
    spec = parse_network(SMALL, stages=parse_stages(STAGES))
    net = Network(spec)
    learner = Learner(net, seed=5)
    learner.run(3, 0.1, LearningOptions(update=mode, promote=promote))
    reference = StagedReference(net, learner.rng_state, 0.1, promote)
    block = learner.run(6, 0.1, LearningOptions(update=mode, promote=promote))
    assert max(block.max_codes) >= 6  # the episodes reach stage 1
    for e in range(6):
        assert reference.episode(mode) == (block.scores[e], block.moves[e])
    np.testing.assert_array_equal(reference.w, net.weights)
    assert net.weights[spec.stage_markers + 1] == (1.0 if promote else 0.0)


def test_restarts_keep_first_boards_and_start_from_them():
    net = Network(parse_network(SMALL))
    learner = Learner(net, seed=9)
    block = learner.run(400, 0.1, LearningOptions(restarts=0.5, restart_code=6))
    held, kept = learner.pools.states[0, :2]
    pool = learner.pools.boards[0, :held, 0]
    assert 0 < held == kept <= 400 - block.restarted.sum()
    assert all(max_code(np.uint64(b)) == 6 for b in pool)  # each game's first board with a 64
    assert 100 < block.restarted.sum() < 300
    again = Network(parse_network(SMALL))
    same = Learner(again, seed=9).run(400, 0.1, LearningOptions(restarts=0.5, restart_code=6))
    assert np.array_equal(again.weights, net.weights) and np.array_equal(same.restarted, block.restarted)
    plain = Network(parse_network(SMALL))
    Learner(plain, seed=9).run(50, 0.1)
    without = Network(parse_network(SMALL))
    Learner(without, seed=9).run(50, 0.1, LearningOptions(restarts=0.0, restart_code=6))
    assert np.array_equal(plain.weights, without.weights)  # no restarts: no random draws for them

    beside = Learner(Network(parse_network(SMALL)), seed=9)  # the first board with a 64 and a 32 beside it
    beside.run(400, 0.1, LearningOptions(restarts=0.5, restart_code=6, restart_beside=5))
    held = beside.pools.states[0, 0]
    boards = [np.uint64(b) for b in beside.pools.boards[0, :held, 0]]
    assert held > 0 and all(max_code(b) >= 6 for b in boards)
    assert all(sum(((int(b) >> (4 * c)) & 15) >= 5 for c in range(16)) >= 2 for b in boards)


def test_otd_then_tc_run_resumes_bit_for_bit_and_the_model_keeps_the_accumulators(tmp_path):
    settings = dict(network=SMALL, stages=STAGES, optimistic=50000, tc_from="50%", episodes=400, block=100, seed=2,
                    restarts=0.2, restart_tile=128)
    whole, stats = train(TrainSettings(**settings))
    assert [s.extra.get("tc", False) for s in stats] == [False, False, True, True]
    assert all(s.games + s.extra["restarted"] == 100 for s in stats)

    run = TrainingRun.create(tmp_path / "run", TrainSettings(**{**settings, "episodes": 300, "tc_from": "200"}))
    for _ in run.blocks():
        pass
    run.finish()
    resumed = TrainingRun.resume(tmp_path / "run", {"episodes": 400})
    for _ in resumed.blocks():
        pass
    model = resumed.finish()
    net, header = load_model(model)
    assert np.array_equal(net.weights, whole.weights) and np.array_equal(net.accumulators, whole.accumulators)
    assert header["version"] == 2 and header["training"]["tc_from"] == "200"
    log = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    assert [b["episodes"] for b in log] == [100, 200, 300, 400] and log[-1]["tc"] and log[-1]["alpha"] == 1.0

    net.accumulators = None  # a playing model: version 1, no accumulators
    save_model(tmp_path / "run" / "snapshot.td2048", net, state=header["state"])
    with pytest.raises(Exception, match="no TC accumulators"):
        TrainingRun.resume(tmp_path / "run", {"episodes": 500})


def test_promote_at_copies_each_stage_from_the_one_before_once_in_each_start(tmp_path, cli_env):
    net = Network(parse_network(SMALL, stages=parse_stages(STAGES)))
    learner = Learner(net, seed=4, threads=2)
    learner.run(200, 1.0, LearningOptions(promote=False), tc=True)
    n = net.spec.stage_weights
    first, first_acc = net.weights[:n].copy(), net.accumulators[:2 * n].copy()
    assert np.any(net.weights[n:2 * n] != first)  # the second stage learned apart
    learner.promote_stages()
    assert np.array_equal(net.weights[n:2 * n], first) and np.array_equal(net.weights[:n], first)
    assert np.array_equal(net.accumulators[:2 * n], first_acc)  # the promoted stage's TC rates start afresh
    assert np.all(net.accumulators[2 * n:4 * n] == np.finfo(np.float32).tiny)
    learner.promote_stages(0.1)
    assert np.all(net.accumulators[2 * n:4 * n:2] == np.float32(0.1 * TC_START_EVIDENCE))

    settings = TrainSettings(network=SMALL, stages=STAGES, promote_at=200, tc_from="0", episodes=400, block=100,
                             seed=2, restarts=0.2, start_over_below=1e9, start_over_at=100)
    _, stats = train(settings)
    assert [(s.extra["start"], s.extra.get("promoted", False)) for s in stats][-4:] == [
        (5, False), (5, True), (5, False), (5, False)]  # each start thrown away at 100, before its promotion
    assert not settings.learning_options().promote  # the kernels' promotion at a stage's first board is off
    assert settings.promoted_tc_rate() == np.float32(0.1)  # alpha 0.1 over TC's 1.0: a TD step, not TC's whole one

    r = td2048("train", "--network", SMALL, "--stages", STAGES, "--promote-at", 150, "--episodes", 200, "--block", 100,
               "--seed", 1, "--out", tmp_path / "run", env=cli_env)
    assert r.returncode == 0, r.stderr
    assert "stages learned apart until episode 150, then each promoted from the one before" in r.stdout
    assert "# episode 150: each stage after the first is now a copy of the one before it" in r.stdout
    log = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    assert [(b["episodes"], b.get("promoted", False)) for b in log] == [(100, False), (150, True), (200, False)]


def test_cli_methods_and_their_errors(tmp_path, cli_env):
    run = tmp_path / "run"
    r = td2048("train", "--network", SMALL, "--episodes", 200, "--block", 100, "--seed", 1, "--stages", STAGES,
               "--optimistic", 1000, "--tc-from", 100, "--tc-records", "--out", run, env=cli_env)  # TC at alpha / tc
    assert r.returncode == 0, r.stderr
    assert "2 stages (from 64)" in r.stdout
    assert "optimistic 1000, TC (alpha 1.0, starting at rate 0.1, on records) from episode 100" in r.stdout
    trained, header = load_model(run / "model.td2048")
    errors, absolutes = trained.accumulators[0::2], trained.accumulators[1::2]
    assert header["training"]["tc_start_rate"] == 0.1 and np.all(absolutes >= TC_START_EVIDENCE)
    untouched = absolutes == TC_START_EVIDENCE
    assert 0 < untouched.sum() < untouched.size and np.all(errors[untouched] == np.float32(30))
    r = td2048("convert", run / "model.td2048", tmp_path / "play.td2048", "--playing", env=cli_env)
    assert r.returncode == 0, r.stderr
    played, _ = load_model(tmp_path / "play.td2048")
    assert played.accumulators is None and played.spec.n_stages == 2
    r = td2048("eval", tmp_path / "play.td2048", "--games", 10, "--depth", 2, "--json", env=cli_env)
    assert r.returncode == 0 and json.loads(r.stdout)["games"] == 10, r.stderr  # search reads the stages too
    assert_one_line_error(td2048("convert", run / "model.td2048", tmp_path / "x.w", env=cli_env), "one stage")
    for args, fragment in ((["--optimistic", "-5"], "must be a number >= 0"),
                           (["--stages", "128,64"], "rising order"),
                           (["--stages", "100"], "not a tile of 2048"),
                           (["--tc-from", "150%"], "--tc-from must be"),
                           (["--tc", "--tc-from", "5"], "give one of them"),
                           (["--tc", "--tc-start-rate", "0"], "--tc-start-rate must be a rate in (0, 1]"),
                           (["--tc", "--tc-start-rate", "1.5"], "--tc-start-rate must be a rate in (0, 1]"),
                           (["--tc-start-rate", "0.1"], "add --tc or --tc-from"),
                           (["--tc-records"], "add --tc or --tc-from"),
                           (["--tc", "--tc-records", "--ray"], "--tc-records is for TC on this machine"),
                           (["--network", "4x6", "--tc", "--tc-records", "--memory-limit", "1GiB"],
                            "--tc-records needs"),
                           (["--restarts", "1"], "--restarts must be"),
                           (["--promote-at", "3"], "it needs --stages"),
                           (["--restart-beside", "1024"], "add --restarts"),
                           (["--restarts", "0.3", "--restart-beside", "1000"], "--restart-beside must be a tile"),
                           (["--stages", STAGES, "--promote-at", "5"], "--promote-at must be an episode within"),
                           (["--restart-tile", "3000"], "--restart-tile must be a tile"),
                           (["--optimistic", "5", "--init", run / "model.td2048"], "with --init"),
                           (["--network", "4x6", "--tc", "--memory-limit", "512MiB"], "over the memory limit")):
        assert_one_line_error(td2048("train", "--episodes", 5, *args, "--out", tmp_path / "x", env=cli_env),
                              fragment)


# ------------------------------------------------------------------------------------------- threads

def test_tc_on_eight_threads_learns_on_the_shared_table_after_td_on_copies():
    """OTD then TC on 8 threads (more than this machine's cores): the TD phase on merged copies, which go into
    the network when TC begins; TC on the network's own weights and accumulators, no copies. Not reproducible,
    so: what the phases leave, finite numbers, and learning."""
    net = Network(parse_network(SMALL, stages=parse_stages(STAGES)))
    net.fill_optimistic(20000)
    learner = Learner(net, seed=4, threads=8, merge_seconds=0.01)
    first = learner.run(400, 0.1, LearningOptions(update="forward", promote=True))
    assert learner._copies is not None and net.accumulators is None
    before = net.weights.copy()
    blocks = [learner.run(400, 1.0, LearningOptions(update="forward"), tc=True) for _ in range(3)]
    assert learner._copies is None  # merged at the switch, then dropped
    learner.merge()  # TC's records, into the network's arrays
    assert not np.array_equal(before, net.weights) and np.isfinite(net.weights).all()
    acc = net.accumulators
    assert np.isfinite(acc).all() and (acc[1::2] >= TINY).all()  # A only grows, from its start
    touched = acc[1::2] > TINY
    assert touched.sum() > 1000 and (acc[1::2][touched] > np.abs(acc[::2][touched]) * 0.5).all()
    assert all((b.moves > 0).all() for b in blocks)
    assert blocks[-1].scores.mean() > 1.5 * first.scores.mean()


def test_otd_then_tc_on_eight_threads_all_on_the_shared_table():
    """The default: TD's threads too write the network's own weights; no copy is ever made."""
    net = Network(parse_network(SMALL))
    net.fill_optimistic(20000)
    learner = Learner(net, seed=4, threads=8)
    start = net.weights.copy()
    first = learner.run(400, 0.1)
    assert learner._copies is None and not np.array_equal(start, net.weights)
    learner.merge()  # nothing to merge
    td = net.weights.copy()
    blocks = [learner.run(400, 1.0, LearningOptions(tc_start_rate=0.1), tc=True) for _ in range(3)]
    learner.merge()
    assert learner._copies is None and not np.array_equal(td, net.weights) and np.isfinite(net.weights).all()
    assert (net.accumulators[1::2] >= TC_START_EVIDENCE).all()
    assert blocks[-1].scores.mean() > 1.5 * first.scores.mean()


def test_restart_rings_saved_by_other_threads_are_dealt_out():
    net = Network(parse_network(SMALL))
    eight = Learner(net, seed=1, threads=8)
    eight.run(200, 0.1, LearningOptions(restarts=0.3, restart_code=5))
    pools = eight.restart_pools()
    boards = sorted(row[0] for pool in pools for row in pool["boards"])
    assert len(pools) == 8 and boards
    two = Learner(net, seed=1, threads=2)
    two.set_restart_pools(pools)
    assert sorted(row[0] for pool in two.restart_pools() for row in pool["boards"]) == boards
    again = Learner(net, seed=1, threads=8)
    again.set_restart_pools(pools)
    assert again.restart_pools() == pools
