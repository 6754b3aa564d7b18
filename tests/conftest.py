import os
import signal
import sys
from pathlib import Path

import pytest
from hypothesis import settings

sys.path.insert(0, str(Path(__file__).parent))

# One profile for every property test: the code under test is compiled, and its first example
# compiles it (or loads it from the cache): no deadline, since no test may depend on timing.
settings.register_profile("td2048", deadline=None, print_blob=True)
settings.load_profile("td2048")

# Started as a background job of a script (`pytest &`), this process and every child it starts would
# ignore SIGINT, and the tests that stop a command with Ctrl-C would wait forever: take Python's
# usual handler back, which a child's exec turns into the default (so the CLI gets its KeyboardInterrupt).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session", autouse=True)
def sb3_log_folder(tmp_path_factory):
    """Stable-Baselines3 makes a folder for its logger on every learn() (tempdir/SB3-<time> unless
    $SB3_LOGDIR names one): keep them in pytest's own temporary folder, not the machine's."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3-logs")))
        yield


@pytest.fixture(scope="session")
def cli_env():
    """Environment for real subprocess runs of the CLI (same kernel cache as the tests); a run that crashes
    prints its Python stack (faulthandler) into the stderr the failing test shows."""
    return {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONFAULTHANDLER": "1"}


# Debian's Chromium driven by Playwright, for the tests of pages (the replay page, the web app)
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium driven by Playwright; missing either is a failure (CI installs both), not a skip."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("playwright is not installed: pip install -e '.[test]'")
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def model_2x3(tmp_path_factory):
    """A small trained 2x3 model (``run/model.td2048``) and the 2x2 and 2x3 solution files."""
    from td2048.cli.__main__ import main

    where = tmp_path_factory.mktemp("exact")
    assert main(["train", "--board", "2x3", "--network", "2x3", "--episodes", "1500", "--seed", "1",
                 "--out", str(where / "run")]) == 0
    for board in ("2x2", "2x3"):
        assert main(["solve", "--board", board, "--out", str(where / f"{board}.solution")]) == 0
    return where


ENDGAME_2X3 = ("0=32,1=16", "1=32")  # 32 and 16 side by side from a corner; a 32 to build where the 16 stands


@pytest.fixture(scope="session")
def endgame_2x3(model_2x3):
    """An endgame's table of 2x3 (``td2048 solve --fixed 0=32,1=16 --goal 1=32``), beside ``model_2x3``'s files."""
    from td2048.cli.__main__ import main

    path = model_2x3 / "endgame.solution"
    if not path.exists():
        assert main(["solve", "--board", "2x3", "--fixed", ENDGAME_2X3[0], "--goal", ENDGAME_2X3[1], "--out",
                     str(path)]) == 0
    return path
