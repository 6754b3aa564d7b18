"""The ``td2048`` command: one module per subcommand, each with ``add_arguments`` and ``run``."""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import sys
from pathlib import Path


def invoked_as() -> str:
    """How this ``td2048`` was typed, for the commands it prints to paste (``# next: td2048 eval ...``).

    Returns
    -------
    str
        ``"td2048"`` when that name runs this same program (an activated environment, an installed one) or when
        td2048 was not started by its script (``python -m td2048.cli``); else the path it was started by, as typed
        and quoted for the shell: ``.venv/bin/td2048`` after the README's set-up, which does not activate the
        environment, so that the printed commands run as printed.
    """
    program = sys.argv[0] if sys.argv else ""
    if Path(program).name != "td2048":
        return "td2048"
    found = shutil.which("td2048")
    with contextlib.suppress(OSError):
        if found is not None and os.path.samefile(found, program):
            return "td2048"
    return shlex.quote(program)
