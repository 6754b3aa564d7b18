"""Plots from real run logs, evaluation with threads, eval --json."""

import json
import subprocess
import sys

from commands import td2048

from td2048.play import evaluate
from td2048.settings import TrainSettings
from td2048.training import train


def test_plot_several_runs(tmp_path):
    for name, seed in (("a", 1), ("b", 2)):
        r = td2048("train", "--network", "2x4", "--episodes", "1500",
                   "--block", "100", "--seed", str(seed), "--out", str(tmp_path / name), "--quiet")
        assert r.returncode == 0, r.stderr
    out = tmp_path / "cmp.png"
    r = td2048("plot", str(tmp_path / "a"), str(tmp_path / "b"), "-o", str(out))
    assert r.returncode == 0, r.stderr
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    r = td2048("plot", str(tmp_path / "missing"))
    assert r.returncode == 2 and "not a training run directory" in r.stderr


def test_plot_reads_a_log_without_numba(tmp_path):
    """td2048 plot reads a JSON log and draws it: it imports matplotlib, never Numba (nor the learner)."""
    run = tmp_path / "run"
    run.mkdir()
    blocks = [{"episodes": 100 * i, "avg": 1000.0 * i, "reach": {"256": 0.1 * i, "512": 0.02 * i}}
              for i in range(1, 4)]
    (run / "log.jsonl").write_text("".join(json.dumps(b) + "\n" for b in blocks))
    script = "\n".join([
        "import sys",
        "from td2048.cli.__main__ import main",
        f"assert main(['plot', {str(run)!r}, '-o', {str(tmp_path / 'p.png')!r}]) == 0",
        "print(sorted(m for m in ('numba', 'td2048.learn', 'td2048.run', 'matplotlib') if m in sys.modules))"])
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == "['matplotlib']", r.stdout
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_eval_threads_and_json(tmp_path):
    net, _ = train(TrainSettings(network="2x4", episodes=1000, block=1000, seed=4))
    one = evaluate(net, 400, seed=1)
    again = evaluate(net, 400, seed=1)
    two = evaluate(net, 400, seed=1, threads=2)
    assert one.avg == again.avg and one.games == two.games == 400
    assert (one.avg, one.max, one.moves, one.reach) == (two.avg, two.max, two.moves, two.reach)  # the same games

    from td2048.io.model import save_model

    save_model(tmp_path / "m.td2048", net)
    r = td2048("eval", str(tmp_path / "m.td2048"), "--games", "300", "--threads", "2", "--json")
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert {"games", "avg", "max", "reach", "moves_per_s"} <= set(result) and result["games"] == 300
    r = td2048("eval", str(tmp_path / "m.td2048"), "--games", "300")
    assert r.returncode == 0 and "\n300\tavg = " in r.stdout


def test_plot_draws_the_tiles_of_the_runs_game(tmp_path, monkeypatch):
    from td2048 import plot

    for name, game, tiles in (("a", "2584", ("2584", "4181")), ("b", "2048", ("2048", "4096"))):
        run = tmp_path / name
        run.mkdir()
        (run / "settings.json").write_text(json.dumps({"game": game}))
        reach = {tiles[0]: 0.9, tiles[1]: 0.4}
        (run / "log.jsonl").write_text(json.dumps({"episodes": 100, "games": 100, "avg": 1.0, "reach": reach}) + "\n")
    drawn = []
    real = plot.reach_rate
    monkeypatch.setattr(plot, "reach_rate", lambda reach, tile: drawn.append(tile) or real(reach, tile))
    plot.plot_runs([tmp_path / "a", tmp_path / "b"], tmp_path / "p.png")
    assert drawn == [2584, 4181, 6765, 10946, 2048, 4096, 8192, 16384]
