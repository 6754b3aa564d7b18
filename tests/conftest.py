import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def cli_env():
    """Environment for real subprocess runs of the CLI (same kernel cache as the tests)."""
    return {**os.environ, "PYTHONUNBUFFERED": "1"}
