"""The Gymnasium environments against Gymnasium's checker, the plain-Python rules, and each other, on 4x4 and on
the 3x3 and 2x4 boards (``size``)."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from naive import move

import td2048
from td2048 import TD2048Error
from td2048.envs.boards import Boards
from td2048.games.shape import as_shape
from td2048.kernels import env as kernels

GAMES = ("2048", "2584")
SIZES = (None, 3, (2, 4))  # 4x4 (the default), 3x3, and 2 rows of 4


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("observation", ["codes", "onehot"])
def test_gymnasium_checker(game, observation):
    env = gym.make(f"td2048/{game}-v0", observation=observation, render_mode="rgb_array")
    check_env(env.unwrapped, skip_render_check=False)
    env.reset(seed=1)
    assert env.render().shape == (400, 400, 3)


def _random_legal(rng, mask) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("size", SIZES)
def test_steps_follow_the_rules(game, size):
    """Every legal step is the plain-Python slide (on the board's R x C grid) plus one new tile (code 1 or 2) on
    an empty cell; the mask holds exactly the moves that change the board; an illegal action changes nothing;
    the frame's cells off the board stay empty."""
    env = gym.make(f"td2048/{game}-v0", size=size).unwrapped
    shape = as_shape(size)
    off_board = ~np.uint64(shape.cells_mask * 15)
    rng = np.random.default_rng(1)
    obs, info = env.reset(seed=7)
    assert obs.shape == (shape.rows, shape.cols) and env.board == shape
    assert (obs > 0).sum() == 2 and set(obs[obs > 0].tolist()) <= {1, 2}
    games = illegal_seen = 0
    max_code = 31 if game == "2584" else 15
    while games < 3:
        grid = obs.tolist()
        slides = [move(grid, d, max_code, game) for d in range(4)]
        assert info["action_mask"].tolist() == [int(s[0] != grid) for s in slides]
        if rng.random() < 0.1:  # now and then an illegal action, when there is one
            bad = np.flatnonzero(info["action_mask"] == 0)
            if len(bad):
                before = obs.copy()
                obs, reward, terminated, truncated, info = env.step(int(bad[0]))
                assert reward == 0 and info["illegal"] and not terminated and (obs == before).all()
                illegal_seen += 1
                continue
        a = _random_legal(rng, info["action_mask"])
        score = info["score"]
        obs, reward, terminated, truncated, info = env.step(a)
        after, gain = slides[a]
        placed = np.array(obs) - np.array(after)
        assert reward == gain and not info["illegal"] and not truncated and info["score"] == score + gain
        assert (placed != 0).sum() == 1 and placed.max() in (1, 2) and np.array(after)[placed != 0] == 0
        assert not (env._boards.boards[0] & off_board).any() and info["max_tile"] == env.tiles.max()
        if terminated:
            assert info["action_mask"].sum() == 0
            assert all(move(obs.tolist(), d, max_code, game)[0] == obs.tolist() for d in range(4))
            with pytest.raises(TD2048Error, match="reset"):
                env.step(0)
            obs, info = env.reset()
            games += 1
    assert illegal_seen > 0


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("size", [None, 3])
def test_vector_env_plays_the_single_envs_games(game, size):
    """Board i of a vector environment reset with seed s plays the single environment's game of seed s + i,
    step for step, through the ends of games (next-step autoreset), with 1 and 2 threads."""
    n, seed, steps = 5, 40, 1500 if size is None else 600
    rng = np.random.default_rng(3)
    vector = [gym.make_vec(f"td2048/{game}-v0", num_envs=n, num_threads=threads, size=size) for threads in (1, 2)]
    assert isinstance(vector[0], td2048.TileGameVectorEnv)
    singles = [gym.make(f"td2048/{game}-v0", size=size).unwrapped for _ in range(n)]
    results = [v.reset(seed=seed) for v in vector]
    single = [env.reset(seed=seed + i) for i, env in enumerate(singles)]
    ended = np.zeros(n, bool)
    endings = 0
    for _ in range(steps):
        for obs, info in results:
            assert np.array_equal(obs, np.stack([s[0] for s in single]))
            assert np.array_equal(info["action_mask"], np.stack([s[1]["action_mask"] for s in single]))
        actions = np.array([_random_legal(rng, m) if m.any() else 0 for m in results[0][1]["action_mask"]])
        actions[rng.random(n) < 0.05] = rng.integers(0, 4)  # now and then any move, legal or not
        steps_out = [v.step(actions) for v in vector]
        for out in steps_out[1:]:
            for a, b in zip(steps_out[0][:4], out[:4]):
                assert np.array_equal(a, b)
        obs, rewards, terminated, truncated, infos = steps_out[0]
        assert not truncated.any()
        for i, env in enumerate(singles):
            if ended[i]:  # the vector environment starts the next game at this step
                single[i] = env.reset()
                assert rewards[i] == 0 and not terminated[i]
            else:
                o, r, t, _, inf = env.step(int(actions[i]))
                single[i] = (o, inf)
                assert (r, t) == (rewards[i], terminated[i])
                assert all(np.array_equal(inf[key], infos[key][i]) for key in inf)
        ended = terminated.copy()
        endings += int(terminated.sum())
        results = [(out[0], out[4]) for out in steps_out]
    assert endings >= 2  # the comparison went through autoresets


def test_reset_seeds():
    env = gym.make("td2048/2048-v0")
    first = env.reset(seed=11)[0]
    env.step(int(np.flatnonzero(env.reset(seed=11)[1]["action_mask"])[0]))
    assert np.array_equal(env.reset(seed=11)[0], first)
    vector = gym.make_vec("td2048/2048-v0", num_envs=3)
    obs, infos = vector.reset(seed=[11, 5, 6])
    assert np.array_equal(obs[0], first)


def _always(action):
    return lambda info: action


def _first_illegal(info):
    """An illegal move where there is one, else the first legal one: a policy that never leaves a game by itself."""
    mask = np.asarray(info["action_mask"])
    return int(np.argmin(mask)) if not mask.all() else 0


@pytest.mark.parametrize("on_illegal", ["ignore", "penalty", "end"])
def test_no_policy_plays_forever(on_illegal):
    """A policy that plays an illegal move whenever there is one ends every game in both environments: "end" at
    its first illegal move (terminated), else after max_illegal in a row (truncated), with reward 0 or the
    penalty; the vector environment cuts the same games at the same steps."""
    kwargs = {"on_illegal": on_illegal, "illegal_penalty": 2.5, "max_illegal": 5}
    n = 3
    singles = [td2048.TileGameEnv(**kwargs) for _ in range(n)]
    vector = td2048.TileGameVectorEnv(n, **kwargs)
    infos = [env.reset(seed=20 + i)[1] for i, env in enumerate(singles)]
    v_obs, v_infos = vector.reset(seed=20)
    for i, env in enumerate(singles):
        steps = illegal_run = 0
        while True:
            obs, reward, terminated, truncated, info = env.step(_first_illegal(infos[i]))
            steps += 1
            illegal_run = illegal_run + 1 if info["illegal"] else 0
            if info["illegal"]:
                assert reward == (-2.5 if on_illegal == "penalty" else 0.0)
            if terminated or truncated:
                break
            infos[i] = info
            assert steps < 1000
        if on_illegal == "end":
            assert terminated and not truncated and info["illegal"] and illegal_run == 1
        else:
            assert truncated and not terminated and illegal_run == 5
        with pytest.raises(TD2048Error, match="reset"):
            env.step(0)
        # the vector environment's board i plays the same game and ends it at the same step
        for _ in range(steps):
            actions = np.array([_first_illegal({"action_mask": m}) for m in v_infos["action_mask"]])
            v_obs, v_rewards, v_terminated, v_truncated, v_infos = vector.step(actions)
        assert (v_terminated[i], v_truncated[i], v_rewards[i], v_infos["illegal"][i]) == (
            terminated, truncated, reward, info["illegal"])
        assert np.array_equal(v_obs[i], obs)
        v_obs, v_infos = vector.reset(seed=20)


def test_max_episode_steps_has_one_meaning():
    """max_episode_steps counts every step, legal or not, in the single environment, in gym.make's TimeLimit and
    in the vector environment; a game cut there starts anew at the vector environment's next step."""
    limit = 7
    made = gym.make("td2048/2048-v0", max_episode_steps=limit)
    own = td2048.TileGameEnv(max_episode_steps=limit)
    vector = td2048.TileGameVectorEnv(2, max_episode_steps=limit)
    cut_at = []
    for env in (made, own):
        info = env.reset(seed=4)[1]
        flags = []
        for _ in range(limit):  # an illegal move where there is one: the illegal steps count too
            _, _, terminated, truncated, info = env.step(_first_illegal(info))
            flags.append((terminated, truncated, info["illegal"]))
        assert flags[-1][1] and not any(t for _, t, _ in flags[:-1])
        assert any(ill for _, _, ill in flags)
        cut_at.append(flags)
    assert cut_at[0] == cut_at[1]
    infos = vector.reset(seed=4)[1]
    truncations = []
    for k in range(2 * limit + 1):
        actions = np.array([_first_illegal({"action_mask": m}) for m in infos["action_mask"]])
        _, _, terminated, truncated, infos = vector.step(actions)
        truncations.append(bool(truncated[0]))
        if k < limit:
            assert (bool(terminated[0]), bool(truncated[0]), bool(infos["illegal"][0])) == cut_at[0][k]
    assert truncations == [False] * (limit - 1) + [True, False] + [False] * (limit - 1) + [True]


def test_action_masks_and_reset_mask():
    env = td2048.TileGameEnv()
    _, info = env.reset(seed=3)
    assert env.action_masks().dtype == bool and np.array_equal(env.action_masks(), info["action_mask"] == 1)
    vector = td2048.TileGameVectorEnv(4)
    obs, infos = vector.reset(seed=3)
    assert np.array_equal(vector.action_masks(), infos["action_mask"] == 1)
    for _ in range(5):
        obs, _, _, _, infos = vector.step(np.argmax(infos["action_mask"], 1))
    mask = np.array([False, True, False, True])
    again, again_infos = vector.reset(seed=3, options={"reset_mask": mask})
    fresh, _ = td2048.TileGameVectorEnv(4).reset(seed=3)
    assert np.array_equal(again[mask], fresh[mask]) and np.array_equal(again[~mask], obs[~mask])
    assert again_infos["moves"].tolist() == [5, 0, 5, 0]
    with pytest.raises(TD2048Error, match="reset_mask"):
        vector.reset(options={"reset_mask": [True]})
    with pytest.raises(TD2048Error, match="option"):
        vector.reset(options={"bad": 1})


@pytest.mark.parametrize("game", GAMES)
def test_observations_agree(game):
    """The three observations of one board say the same thing; the vector environment's infos hold the single
    environment's keys."""
    envs = {kind: td2048.TileGameEnv(game=game, observation=kind) for kind in ("codes", "onehot", "onehot_flat")}
    obs = {kind: env.reset(seed=8)[0] for kind, env in envs.items()}
    for _ in range(30):
        action = int(np.argmax(envs["codes"].action_masks()))
        obs = {kind: env.step(action)[0] for kind, env in envs.items()}
    planes = 16 if game == "2048" else 32
    assert obs["onehot"].shape == (planes, 4, 4) and obs["onehot_flat"].shape == (planes * 16,)
    assert obs["onehot_flat"].dtype == np.float32 and envs["onehot_flat"].observation_space.contains(obs["onehot_flat"])
    assert np.array_equal(obs["onehot"].argmax(0), obs["codes"])
    assert np.array_equal(obs["onehot_flat"].reshape(planes, 4, 4), obs["onehot"])
    vector = td2048.TileGameVectorEnv(2, game=game, observation="onehot_flat", copy=False)
    v_obs, v_infos = vector.reset(seed=8)
    _, info = td2048.TileGameEnv(game=game).reset(seed=8)
    assert {k for k in v_infos if not k.startswith("_")} == set(info)
    assert all(v_infos["_" + k].all() for k in info)
    assert int(v_infos["max_tile"][0]) == info["max_tile"] == int(td2048.TileGameEnv(game=game).reset(seed=8)[1][
        "max_tile"])


def test_bad_input_is_one_clear_error():
    with pytest.raises(TD2048Error, match="game must be 2048 or 2584"):
        td2048.TileGameEnv(game="1024")
    with pytest.raises(TD2048Error, match="cells"):
        td2048.TileGameEnv(game="2584", cells=4)
    with pytest.raises(TD2048Error, match="observation"):
        td2048.TileGameEnv(observation="pixels")
    with pytest.raises(TD2048Error, match="on_illegal must be one of 'ignore', 'penalty', 'end'"):
        td2048.TileGameEnv(on_illegal="skip")
    with pytest.raises(TD2048Error, match="max_illegal must be a positive integer"):
        td2048.TileGameVectorEnv(2, max_illegal=0)
    with pytest.raises(TD2048Error, match="max_episode_steps must be a positive integer or None"):
        td2048.TileGameVectorEnv(2, max_episode_steps=2.5)
    with pytest.raises(TD2048Error, match="illegal_penalty must be a finite number"):
        td2048.TileGameEnv(illegal_penalty=float("nan"))
    env = td2048.TileGameEnv()
    env.reset(seed=1)
    with pytest.raises(TD2048Error, match="action must be 0..3"):
        env.step(4)
    vector = td2048.TileGameVectorEnv(num_envs=2)
    vector.reset(seed=1)
    with pytest.raises(TD2048Error, match="actions must be 0..3"):
        vector.step(np.array([0, 7]))
    with pytest.raises(TD2048Error, match="2 integers"):
        vector.step(np.array([0, 1, 2]))
    with pytest.raises(TD2048Error, match="one seed per environment"):
        vector.reset(seed=[1])


def test_renders():
    env = gym.make("td2048/2584-v0", render_mode="ansi")
    env.reset(seed=2)
    text = env.render()
    assert text.count("\n") == 5 and "score 0" in text
    vector = gym.make_vec("td2048/2048-v0", num_envs=2, render_mode="rgb_array")
    vector.reset(seed=2)
    frames = vector.render()
    assert len(frames) == 2 and frames[0].shape == (400, 400, 3) and frames[0].dtype == np.uint8


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("size", [3, (2, 4)])
def test_gymnasium_checker_on_other_boards(game, size):
    """Gymnasium's checker passes on the 3x3 and 2x4 boards; observations, spaces and pictures have the board's
    rows and columns."""
    rows, cols = as_shape(size).rows, as_shape(size).cols
    planes = 16 if game == "2048" else 32
    env = gym.make(f"td2048/{game}-v0", size=size, render_mode="rgb_array")
    check_env(env.unwrapped, skip_render_check=False)
    env.reset(seed=1)
    assert env.render().shape == (100 * rows, 100 * cols, 3)
    spaces = {kind: td2048.TileGameEnv(game=game, size=size, observation=kind).observation_space
              for kind in ("codes", "onehot", "onehot_flat")}
    assert spaces["codes"].shape == (rows, cols) and spaces["onehot"].shape == (planes, rows, cols)
    assert spaces["onehot_flat"].shape == (planes * rows * cols,)
    check_env(gym.make(f"td2048/{game}-v0", size=size, observation="onehot_flat").unwrapped)


@pytest.mark.parametrize("size", [3, (2, 4), "3x4"])
def test_observations_agree_on_other_boards(size):
    """On a smaller board the three observations say the same thing, and a vector environment with copy=False
    hands out its own codes, rows x cols, which every step rewrites."""
    shape = as_shape(size)
    envs = {kind: td2048.TileGameEnv(game="2584", size=size, observation=kind)
            for kind in ("codes", "onehot", "onehot_flat")}
    obs = {kind: env.reset(seed=8)[0] for kind, env in envs.items()}
    for _ in range(6):
        action = int(np.argmax(envs["codes"].action_masks()))
        obs = {kind: env.step(action)[0] for kind, env in envs.items()}
    assert (obs["codes"] > 0).sum() >= 2 and envs["codes"].tiles.shape == (shape.rows, shape.cols)
    assert np.array_equal(obs["onehot"].argmax(0), obs["codes"])
    assert np.array_equal(obs["onehot_flat"].reshape(32, shape.rows, shape.cols), obs["onehot"])
    own = td2048.TileGameVectorEnv(3, size=size, copy=False)
    copies = td2048.TileGameVectorEnv(3, size=size)
    first, infos = own.reset(seed=2)
    assert np.array_equal(first, copies.reset(seed=2)[0]) and first.shape == (3, shape.rows, shape.cols)
    for _ in range(4):
        actions = np.argmax(infos["action_mask"], 1)
        out, _, _, _, infos = own.step(actions)
        assert out is first and np.array_equal(out, copies.step(actions)[0])


@pytest.mark.parametrize("wide", [False, True])
def test_the_4x4_kernels_are_the_general_ones(wide):
    """The 4x4 board's kernels (its shape's values as constants) and the general kernels given the 4x4 shape's
    arguments play the same games, array for array."""
    boards = [Boards(8, "2584" if wide else "2048", rules=None) for _ in range(2)]
    general = boards[1]
    general._kernel = kernels.step_wide if wide else kernels.step_narrow
    general.shape_args = (np.uint64(0x1111111111111111), np.int64(0), np.int64(4), np.int64(4))
    rng = np.random.default_rng(4)
    for b in boards:
        b.seed(range(8))
        b.reset()
    for _ in range(800):
        actions = rng.integers(0, 4, 8)
        for b in boards:
            b.step(actions)
        for name in ("boards", "afters", "gains", "rngs", "codes", "rewards", "terminated", "truncated", "masks",
                     "counts"):
            assert np.array_equal(getattr(boards[0], name), getattr(general, name)), name
    assert general.counts[kernels.MOVES].sum() > 0


@pytest.mark.parametrize("size", [5, (1, 4), "abc", (3, 3, 3), 2.5, True, (4, 5)])
def test_a_bad_size_is_one_clear_error(size):
    for make in (lambda: td2048.TileGameEnv(size=size), lambda: gym.make("td2048/2048-v0", size=size),
                 lambda: gym.make_vec("td2048/2584-v0", num_envs=2, size=size)):
        with pytest.raises(TD2048Error, match="size") as error:
            make()
        assert "\n" not in str(error.value)


def test_renders_on_other_boards():
    env = gym.make("td2048/2048-v0", size=(2, 4), render_mode="ansi")
    env.reset(seed=2)
    text = env.render()
    assert text.count("\n") == 3 and "score 0" in text and len(text.splitlines()[0].split()) == 4
    vector = gym.make_vec("td2048/2584-v0", num_envs=2, size="3x2", render_mode="rgb_array")
    vector.reset(seed=2)
    frames = vector.render()
    assert len(frames) == 2 and frames[0].shape == (300, 200, 3) and frames[0].dtype == np.uint8
