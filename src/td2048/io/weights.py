"""The interim weight file: a NumPy ``.npz`` archive (readable with plain NumPy).

Members:

- ``meta``: a 0-d unicode array holding JSON: ``format`` ("td2048-weights"), ``version`` (1),
  ``network`` (name, tuples as hex strings, isomorphisms), ``game`` ("2048") and training
  metadata (episodes, alpha, update, seed, td2048 version, date).
- ``weights``: one float32 array, the tuples' tables one after another in network order; the
  table of a tuple with n cells has 16**n entries, index = sum of code(cell_i) << (4 i).

Read by hand::

    z = np.load("weights.npz"); meta = json.loads(str(z["meta"])); w = z["weights"]

The full model-file format (header, checksum, versioning) replaces this in a later release.
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import numpy as np

from td2048.errors import TD2048Error
from td2048.io.atomic import atomic_open
from td2048.network import Network, NetworkSpec

FORMAT = "td2048-weights"
VERSION = 1


def save_weights(path: str | os.PathLike, network: Network, **metadata) -> None:
    meta = {"format": FORMAT, "version": VERSION, "game": "2048", "network": network.spec.to_dict(), **metadata}
    with atomic_open(path, "wb") as f:
        np.savez(f, meta=np.array(json.dumps(meta)), weights=network.weights)


def load_weights(path: str | os.PathLike) -> tuple[Network, dict]:
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            if meta.get("format") != FORMAT:
                raise TD2048Error(f"{path}: not a td2048 weight file")
            if meta.get("version", 0) > VERSION:
                raise TD2048Error(f"{path}: weight file version {meta['version']} is newer than this td2048 reads")
            net = meta["network"]
            spec = NetworkSpec(tuple(tuple(int(c, 16) for c in t) for t in net["tuples"]),
                               int(net["isomorphisms"]), net.get("name", ""))
            weights = z["weights"]
    except TD2048Error:
        raise
    except FileNotFoundError:
        raise TD2048Error(f"{path}: no such file") from None
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, json.JSONDecodeError, EOFError) as e:
        raise TD2048Error(f"{path}: not a readable td2048 weight file ({type(e).__name__})") from None
    return Network(spec, weights, memory_limit=max(spec.nbytes, 1)), meta
