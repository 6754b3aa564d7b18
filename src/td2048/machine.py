"""What the machine td2048 runs on has: its memory, in all and free now."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from td2048.config import DEFAULT_MEMORY_LIMIT


def machine_memory() -> int:
    """The machine's physical memory in bytes (the solver's default limit), or 2 GiB where it cannot be read."""
    with contextlib.suppress(ValueError, OSError, AttributeError):
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    return DEFAULT_MEMORY_LIMIT


def available_memory() -> int | None:
    """The memory a new allocation can take now without pushing other programs out, in bytes.

    Linux's own estimate (``MemAvailable`` of ``/proc/meminfo``: free memory and the caches that can be dropped),
    else the free pages (``SC_AVPHYS_PAGES``); None where neither can be read.
    """
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024  # kB
    with contextlib.suppress(ValueError, OSError, AttributeError):
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES"))
    return None
