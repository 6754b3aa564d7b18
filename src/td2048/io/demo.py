"""The course demo's binary weight file (``.bin``), read and written byte for byte.

Layout (little-endian)::

    u64                     number of features
    per feature:
        i32                 length of the name
        bytes               the name, e.g. "6-tuple pattern 012345" (no terminator)
        u64                 number of entries (16**n)
        float32 x entries   the table, index = sum of code(cell_i) << (4 i)

The demo shares each feature over 8 isomorphisms and indexes tables the way td2048 does, so
the tables carry over unchanged and V is the same board for board.
"""

from __future__ import annotations

import os
import re
import struct
from pathlib import Path

import numpy as np

from td2048.errors import TD2048Error
from td2048.io.atomic import atomic_open
from td2048.network import Network
from td2048.spec import NetworkSpec, tuple_to_hex

DEMO_ISOMORPHISMS = 8
_NAME = re.compile(r"(\d+)-tuple pattern ([0-9a-fA-F]+)")


def feature_name(cells) -> str:
    return f"{len(cells)}-tuple pattern {tuple_to_hex(cells)}"


def write_demo_weights(path: str | os.PathLike, network: Network) -> None:
    if network.game != "2048" or network.spec.clamp is not None:
        raise TD2048Error("the demo's format holds 2048 networks of 16**n tables; this is a "
                          f"{network.game} network{' with a clamp' if network.spec.clamp is not None else ''}")
    if network.spec.stages:
        raise TD2048Error(f"the demo's files hold one stage; this network has "
                          f"{network.spec.n_stages} (td2048 model files hold them)")
    if network.method != "afterstate":
        raise TD2048Error(f"the demo plays afterstate values; this network learned {network.method} values "
                          "(--method state), which the demo would misread")
    if network.spec.isomorphisms != DEMO_ISOMORPHISMS:
        raise TD2048Error(f"the demo's format assumes 8 isomorphisms; network {network.spec.name} has "
                          f"{network.spec.isomorphisms}")
    with atomic_open(path, "wb") as f:
        f.write(struct.pack("<Q", len(network.spec.tuples)))
        for cells, table in zip(network.spec.tuples, network.tables(), strict=True):
            name = feature_name(cells).encode()
            f.write(struct.pack("<i", len(name)) + name + struct.pack("<Q", table.size))
            f.write(np.ascontiguousarray(table, "<f4").tobytes())


def read_demo_weights(path: str | os.PathLike, memory_limit: int | None = None) -> Network:
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise TD2048Error(f"{path}: no such file") from None
    except OSError as e:
        raise TD2048Error(f"{path}: cannot read ({e.strerror})") from None

    def take(fmt, at):
        size = struct.calcsize(fmt)
        if at + size > len(raw):
            raise TD2048Error(f"{path}: truncated demo weight file")
        return struct.unpack_from(fmt, raw, at), at + size

    (count,), at = take("<Q", 0)
    if not 0 < count <= 64:
        raise TD2048Error(f"{path}: not a demo weight file (feature count {count})")
    tuples, tables = [], []
    for _ in range(count):
        (name_len,), at = take("<i", at)
        if not 0 < name_len <= 256:
            raise TD2048Error(f"{path}: not a demo weight file (bad feature name)")
        if at + name_len > len(raw):
            raise TD2048Error(f"{path}: truncated demo weight file")
        name = raw[at:at + name_len].decode("ascii", "replace")
        at += name_len
        match = _NAME.fullmatch(name)
        if not match or int(match.group(1)) != len(match.group(2)):
            raise TD2048Error(f"{path}: feature name {name!r} is not of the form 'N-tuple pattern CELLS'")
        cells = tuple(int(c, 16) for c in match.group(2))
        (entries,), at = take("<Q", at)
        if entries != 16 ** len(cells):
            raise TD2048Error(f"{path}: feature {name!r} has {entries} entries, expected {16 ** len(cells)}")
        if at + 4 * entries > len(raw):
            raise TD2048Error(f"{path}: truncated demo weight file")
        tables.append(np.frombuffer(raw, "<f4", count=entries, offset=at))
        at += 4 * entries
        tuples.append(cells)
    if at != len(raw):
        raise TD2048Error(f"{path}: {len(raw) - at} unexpected bytes after the last feature")
    spec = NetworkSpec(tuple(tuples), DEMO_ISOMORPHISMS)
    weights = np.concatenate(tables).astype(np.float32)
    return Network(spec, weights, memory_limit=max(spec.nbytes, memory_limit or 0))
