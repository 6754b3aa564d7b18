import numpy as np

from td2048.stats import BlockStats


def test_block_table_and_reach_rates():
    max_codes = np.array([7] * 2 + [8] * 3 + [10] * 4 + [11] * 1)  # 128, 256, 1024, 2048
    scores = np.arange(10) * 100
    s = BlockStats.from_block(1000, scores, max_codes, np.full(10, 50), seconds=0.5)
    assert s.reach == {"128": 1.0, "256": 0.8, "512": 0.5, "1024": 0.5, "2048": 0.1}
    assert s.end["512"] == 0 and s.end["1024"] == 0.4
    assert s.reach_rate(2048) == 0.1 and s.reach_rate(64) == 1.0 and s.reach_rate(4096) == 0.0
    assert s.table() == ("1000\tavg = 450\tmax = 900\n"
                         "\t128\t100%\t(20%)\n"
                         "\t256\t80%\t(30%)\n"
                         "\t512\t50%\t(0%)\n"
                         "\t1024\t50%\t(40%)\n"
                         "\t2048\t10%\t(10%)\n")
    j = s.to_json()
    assert {"episodes", "avg", "max", "reach", "moves", "seconds"} <= set(j)
    assert j["moves"] == 500 and j["moves_per_s"] == 1000.0
    # the mean's standard error, for its 95% interval: the sample standard deviation over sqrt(games)
    reference = (sum((x - 450) ** 2 for x in scores) / 9) ** 0.5
    assert abs(j["std"] - reference) < 1e-3 and abs(s.stderr - reference / 10 ** 0.5) < 1e-9
    assert BlockStats.from_block(1, np.array([7]), np.array([3]), np.array([1]), 1).stderr == 0.0


def test_percentages_have_six_significant_digits():
    max_codes = np.array([11] * 1000 + [10] * 7)
    s = BlockStats.from_block(1007, np.ones(1007, int), max_codes, np.ones(1007, int), 1.0)
    assert "\t2048\t99.3049%\t(99.3049%)" in s.table()
    assert BlockStats.from_block(1, np.array([68663]), np.array([11]), np.array([1]), 1).table().startswith(
        "1\tavg = 68663\tmax = 68663\n")
