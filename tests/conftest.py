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


@pytest.fixture(scope="session")
def cli_env():
    """Environment for real subprocess runs of the CLI (same kernel cache as the tests)."""
    return {**os.environ, "PYTHONUNBUFFERED": "1"}
