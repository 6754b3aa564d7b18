"""--time-limit: a run ends at its episodes or its training time, whichever comes first, and a resumed run goes on
to its limit."""

import json

import pytest
from commands import td2048

from td2048.io.model import load_model
from td2048.settings import TrainSettings
from td2048.training import train

RUN = ["train", "--board", "2x3", "--network", "012,345", "--block", "20000", "--seed", "3"]


def blocks(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_run_ends_at_its_time_limit_and_resumes_to_a_larger_one(tmp_path):
    out = tmp_path / "run"
    result = td2048(*RUN, "--episodes", "100000000", "--time-limit", "1s", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "at most 1s of training" in result.stdout and "in the time limit of 1s" in result.stdout
    first = blocks(out / "log.jsonl")
    episodes = first[-1]["episodes"]
    assert [b for b in first if b.get("time_limit")] in ([], [first[-1]])  # cut to the time left, if at all
    assert 0 < episodes < 100_000_000
    assert load_model(out / "model.td2048")[1]["state"]["episodes"] == episodes

    result = td2048("train", "--resume", str(out), "--quiet")  # on to its limit, at most
    assert result.returncode == 0, result.stderr
    episodes = blocks(out / "log.jsonl")[-1]["episodes"]
    assert episodes < 100_000_000

    result = td2048("train", "--resume", str(out), "--time-limit", "off", "--episodes", str(episodes + 1000),
                    "--quiet")
    assert result.returncode == 0, result.stderr
    assert blocks(out / "log.jsonl")[-1]["episodes"] == episodes + 1000


@pytest.mark.parametrize("extra, fragment", [
    (["--time-limit", "5x"], "--time-limit must be a time"),
    (["--time-limit", "0s"], "--time-limit must be a time"),
    (["--time-limit", "off"], "a new run has none to lift"),
])
def test_refusals(tmp_path, extra, fragment):
    result = td2048(*RUN, "--episodes", "1000", *extra, "--out", str(tmp_path / "run"))
    assert result.returncode == 2
    assert fragment in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_in_memory_the_episodes_come_first_when_they_are_fewer():
    settings = TrainSettings(board="2x3", network="012,345", episodes=3000, block=1000, seed=1, time_limit="1h")
    _, stats = train(settings)
    assert [b.episodes for b in stats] == [1000, 2000, 3000]
