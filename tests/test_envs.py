"""The Gymnasium environments against Gymnasium's checker, the plain-Python rules, and each other."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from naive import move

import td2048
from td2048 import TD2048Error

GAMES = ("2048", "2584")


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
def test_steps_follow_the_rules(game):
    """Every legal step is the plain-Python slide plus one new tile (code 1 or 2) on an empty cell; the
    mask holds exactly the moves that change the board; an illegal action changes nothing."""
    env = gym.make(f"td2048/{game}-v0").unwrapped
    rng = np.random.default_rng(1)
    obs, info = env.reset(seed=7)
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
        if terminated:
            assert info["action_mask"].sum() == 0
            assert all(move(obs.tolist(), d, max_code, game)[0] == obs.tolist() for d in range(4))
            with pytest.raises(TD2048Error, match="reset"):
                env.step(0)
            obs, info = env.reset()
            games += 1
    assert illegal_seen > 0


@pytest.mark.parametrize("game", GAMES)
def test_vector_env_plays_the_single_envs_games(game):
    """Board i of a vector environment reset with seed s plays the single environment's game of seed s + i,
    step for step, through the ends of games (next-step autoreset), with 1 and 2 threads."""
    n, seed, steps = 5, 40, 1500
    rng = np.random.default_rng(3)
    vector = [gym.make_vec(f"td2048/{game}-v0", num_envs=n, num_threads=threads) for threads in (1, 2)]
    assert isinstance(vector[0], td2048.TileGameVectorEnv)
    singles = [gym.make(f"td2048/{game}-v0").unwrapped for _ in range(n)]
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
                assert (r, t, inf["illegal"]) == (rewards[i], terminated[i], infos["illegal"][i])
        ended = terminated.copy()
        endings += int(terminated.sum())
        results = [(out[0], out[4]) for out in steps_out]
    assert endings >= 2  # the comparison went through autoresets


def test_reset_seeds_and_truncation():
    env = gym.make("td2048/2048-v0")
    first = env.reset(seed=11)[0]
    env.step(int(np.flatnonzero(env.reset(seed=11)[1]["action_mask"])[0]))
    assert np.array_equal(env.reset(seed=11)[0], first)
    vector = gym.make_vec("td2048/2048-v0", num_envs=3, max_episode_steps=4)
    obs, infos = vector.reset(seed=[11, 5, 6])
    assert np.array_equal(obs[0], first)
    truncations = []
    for _ in range(10):
        obs, rewards, terminated, truncated, infos = vector.step(np.argmax(infos["action_mask"], 1))
        truncations.append(bool(truncated[0]))
    assert truncations == [False, False, False, True, False] + [False, False, False, True, False]  # 5th: new game


def test_bad_input_is_one_clear_error():
    with pytest.raises(TD2048Error, match="game must be 2048 or 2584"):
        td2048.TileGameEnv(game="1024")
    with pytest.raises(TD2048Error, match="cells"):
        td2048.TileGameEnv(game="2584", cells=4)
    with pytest.raises(TD2048Error, match="observation"):
        td2048.TileGameEnv(observation="pixels")
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
