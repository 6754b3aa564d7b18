"""The environments with the RL libraries people use, as they are: Stable-Baselines3, sb3-contrib's MaskablePPO
and PufferLib's Gymnasium emulation (the ``rl`` extra; the tests skip without it). Training runs are a few
thousand steps: they check that the libraries take the environments, not what they learn."""

import warnings

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("stable_baselines3", reason="needs the rl extra: pip install -e '.[rl]'")
sb3_contrib = pytest.importorskip("sb3_contrib", reason="needs the rl extra: pip install -e '.[rl]'")

import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.maskable.evaluation import evaluate_policy as evaluate_masked  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.env_checker import check_env  # noqa: E402
from stable_baselines3.common.evaluation import evaluate_policy  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor  # noqa: E402

import td2048  # noqa: E402
from td2048.envs.sb3 import TileGameSB3VecEnv  # noqa: E402

torch.set_num_threads(1)
SMALL = {"n_steps": 128, "batch_size": 128, "n_epochs": 1, "policy_kwargs": {"net_arch": [32]}, "seed": 0}


@pytest.mark.parametrize(("game", "size"), [("2048", None), ("2584", None), ("2048", 3), ("2584", (2, 4))])
def test_sb3_check_env_without_warnings(game, size):
    env = gym.make(f"td2048/{game}-v0", observation="onehot_flat", size=size)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env)


@pytest.mark.parametrize(("game", "on_illegal", "size"), [("2048", "ignore", None), ("2584", "penalty", None),
                                                          ("2048", "end", None), ("2584", "ignore", 3)])
def test_sb3_vec_env_plays_dummy_vec_envs_games(game, on_illegal, size):
    """TileGameSB3VecEnv gives what SB3's DummyVecEnv over TileGameEnv gives, seed for seed and step for step:
    observations, rewards, dones and infos (terminal_observation and TimeLimit.truncated at the resets in the
    same step), through game ends, illegal moves and truncations, with 1 and 2 threads (on 4x4 and 3x3)."""
    n, steps = 6, 1200 if size is None else 400
    kwargs = {"game": game, "on_illegal": on_illegal, "max_illegal": 3, "size": size,
              "max_episode_steps": 150 if size is None else 40}
    ours = [TileGameSB3VecEnv(n, num_threads=t, full_infos=True, **kwargs) for t in (1, 2)]
    dummy = DummyVecEnv([lambda: td2048.TileGameEnv(observation="onehot_flat", **kwargs) for _ in range(n)])
    for env in (*ours, dummy):
        env.seed(70)
    results = [env.reset() for env in (*ours, dummy)]
    assert all(np.array_equal(results[0], r) for r in results[1:])
    rng = np.random.default_rng(5)
    ends = cuts = 0
    for _ in range(steps):
        masks = np.stack(dummy.env_method("action_masks"))
        assert np.array_equal(np.stack(ours[0].env_method("action_masks")), masks)
        legal = [int(rng.choice(np.flatnonzero(m))) for m in masks]
        actions = np.where(rng.random(n) < 0.2, rng.integers(0, 4, n), legal)
        outs = [env.step(actions) for env in (*ours, dummy)]
        for out in outs[:2]:
            obs, rewards, dones, infos = out
            assert np.array_equal(obs, outs[2][0]) and np.array_equal(rewards, outs[2][1])
            assert np.array_equal(dones, outs[2][2]) and rewards.dtype == np.float32
            for mine, theirs in zip(infos, outs[2][3]):
                assert mine.keys() == theirs.keys()
                assert all(np.array_equal(mine[k], theirs[k]) for k in theirs)
        ends += int(outs[2][2].sum())
        cuts += sum(info.get("TimeLimit.truncated", False) for info in outs[2][3])
    assert ends > cuts > 0 or (on_illegal == "end" and ends > 0)  # it went through game ends and truncations


def test_sb3_vec_env_infos_and_attributes():
    env = TileGameSB3VecEnv(4, max_illegal=2)
    env.seed(3)
    obs = env.reset()
    assert obs.shape == (4, 256) and obs.dtype == np.float32 and env.observation_space.contains(obs[0])
    assert env.has_attr("action_masks") and env.get_attr("render_mode") == [None] * 4
    assert env.get_attr("action_masks", 1)[0]().tolist() == env.env_method("action_masks", indices=[1])[0].tolist()
    assert env.get_attr("score") == [0] * 4 and env.env_is_wrapped(gym.Wrapper) == [False] * 4
    with pytest.raises(AttributeError):
        env.get_attr("nothing")
    with pytest.raises(AttributeError):
        env.env_method("reset")
    with pytest.raises(td2048.TD2048Error):
        env.set_attr("game", "2584")
    for _ in range(3):  # always up: the cap of 2 illegal moves in a row ends some games
        obs, rewards, dones, infos = env.step(np.zeros(4, np.int64))
        for info, done in zip(infos, dones):
            if done:
                assert info["TimeLimit.truncated"] and info["illegal"] and info["terminal_observation"].shape == (256,)
                assert {"score", "moves", "max_tile", "action_mask"} <= info.keys()
            else:
                assert info == {}
    assert env.get_attr("moves") == [0 if d else m for d, m in zip(dones, env.get_attr("moves"))]


@pytest.mark.parametrize("algo", [PPO, MaskablePPO])
def test_training_on_the_single_env_and_evaluating_deterministically(algo):
    """PPO and MaskablePPO train on the single environment as it is, and a deterministic evaluation returns: a
    policy that repeats an illegal move has its game cut after max_illegal moves."""
    env = gym.make("td2048/2048-v0", observation="onehot_flat")
    model = algo("MlpPolicy", env, **SMALL).learn(512)
    evaluate = evaluate_masked if algo is MaskablePPO else evaluate_policy
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SB3 asks for a Monitor wrapper, which make_vec_env would add
        rewards, lengths = evaluate(model, env, n_eval_episodes=3, deterministic=True, return_episode_rewards=True)
    assert len(rewards) == 3 and all(length > 0 for length in lengths)


@pytest.mark.parametrize("algo", [PPO, MaskablePPO])
def test_training_on_the_sb3_vec_env(algo):
    """Both algorithms train on the SB3 vector environment (MaskablePPO reads its masks through env_method), the
    episode statistics reach SB3's logs through VecMonitor, and a deterministic evaluation returns."""
    env = VecMonitor(TileGameSB3VecEnv(16))
    model = algo("MlpPolicy", env, **SMALL).learn(4096)
    assert len(model.ep_info_buffer) > 0  # games ended and were counted
    evaluate = evaluate_masked if algo is MaskablePPO else evaluate_policy
    rewards, lengths = evaluate(model, env, n_eval_episodes=4, deterministic=True, return_episode_rewards=True)
    assert len(rewards) >= 4 and min(lengths) > 0
    if algo is MaskablePPO:
        assert min(rewards) > 0


def test_pufferlib_plays_games():
    emulation = pytest.importorskip("pufferlib.emulation", reason="needs the rl extra: pip install -e '.[rl]'")
    for observation in ("onehot_flat", "codes"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            env = emulation.GymnasiumPufferEnv(env_creator=lambda obs=observation: td2048.TileGameEnv(observation=obs))
            obs, info = env.reset(seed=1)
            rng = np.random.default_rng(1)
            games = steps = 0
            while games < 2:
                obs, reward, terminated, truncated, info = env.step(rng.integers(0, 4))
                steps += 1
                if terminated or truncated:
                    games += 1
                    obs, info = env.reset()
        assert steps > 20 and obs.size == np.prod(env.observation_space.shape)


def test_maskable_ppo_on_the_3x3_board():
    """MaskablePPO takes the 3x3 board, both as the single environment and as the SB3 vector environment (a few
    hundred steps each), and its games end and are counted."""
    single = gym.make("td2048/2048-v0", size=3, observation="onehot_flat")
    assert single.observation_space.shape == (16 * 9,)
    MaskablePPO("MlpPolicy", single, **{**SMALL, "n_steps": 64, "batch_size": 64}).learn(128)
    env = VecMonitor(TileGameSB3VecEnv(4, size=3))
    assert env.reset().shape == (4, 144) and env.get_attr("board")[0] == td2048.BoardShape(3, 3)
    model = MaskablePPO("MlpPolicy", env, **{**SMALL, "n_steps": 64, "batch_size": 256}).learn(256)
    assert len(model.ep_info_buffer) > 0
    rewards, lengths = evaluate_masked(model, env, n_eval_episodes=4, deterministic=True, return_episode_rewards=True)
    assert len(rewards) >= 4 and min(lengths) > 0


def test_a_maskable_ppo_model_valued_exactly_matches_its_games():
    """td2048.envs.board_policy: a MaskablePPO model trained on the 2x3 board, valued exactly against the
    board's solution, has the average score of its own deterministic games (within 4 standard errors)."""
    from td2048.envs.policy import board_policy
    from td2048.solve import exact_policy_value, solve

    env = VecMonitor(TileGameSB3VecEnv(64, size=(2, 3)))
    model = MaskablePPO("MlpPolicy", env, **{**SMALL, "n_steps": 32, "batch_size": 512}).learn(4096)
    choose = board_policy(model, size=(2, 3))
    observations = env.reset()
    for _ in range(5):  # on the environment's own boards, the model's own moves
        masks = np.stack(env.env_method("action_masks"))
        want, _ = model.predict(observations, action_masks=masks, deterministic=True)
        assert np.array_equal(choose(env.unwrapped._boards.boards.copy()), want)
        observations = env.step(want)[0]
    result = exact_policy_value(solve("2x3", keep_values=True), choose)
    games = 2000
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores, _ = evaluate_masked(model, env, n_eval_episodes=games, deterministic=True,
                                    return_episode_rewards=True)
    scores = np.array(scores)
    error = scores.std(ddof=1) / np.sqrt(len(scores))
    assert abs(scores.mean() - result.expected_score) < 4 * error, (scores.mean(), result.expected_score, error)
    assert 0 < result.optimal_move_share < 1 and result.expected_score < result.optimal_expected_score
