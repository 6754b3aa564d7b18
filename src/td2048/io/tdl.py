"""TDL2048+'s weight files (``.w``), read and written, so that one network plays in both programs.

Layout (little-endian), learned from TDL2048+'s source and checked on files it wrote::

    u8      0                       the file's format
    u32     number of tables
    per table:
        u8      4                   the table's format (plain float32 values)
        8 bytes name                a pattern of hex cells "012345": u32 0x012345, u16 6 (digits), u16 0
                                    (other names: 8 ASCII characters, space-padded)
        u16     4                   bytes per value (float32)
        u64     entries             16 ** cells
        f32[entries]                index = sum of code(cell_i) << (4 i), first listed cell lowest
        u16     0                   no extra data

TDL2048+ shares each table over the 8 isomorphisms of the board and indexes it as td2048
and the course demo do, so a table carries over unchanged: V is the same, board for board
(4x6patt is td2048's 4x6, 8x6patt its 8x6, tables in the same order). The file does not say
how many isomorphisms a table is shared over; TDL2048+'s patterns are shared over 8.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

import numpy as np

from td2048.errors import TD2048Error
from td2048.io.atomic import atomic_open
from td2048.network import Network, NetworkSpec, aligned_zeros, format_bytes, tuple_to_hex

TDL_ISOMORPHISMS = 8
_FILE_FORMAT, _TABLE_FORMAT, _VALUE_BYTES = 0, 4, 4


def _name_bytes(cells) -> bytes:
    digits = tuple_to_hex(cells)
    return struct.pack("<IHH", int(digits, 16), len(digits), 0)


def _cells_of(name: bytes, path: Path) -> tuple[int, ...]:
    value, length, zero = struct.unpack("<IHH", name)
    if zero != 0 or not 1 <= length <= 8 or value >= 16 ** length:
        text = name.decode("ascii", "replace").strip()
        raise TD2048Error(f"{path}: table {text!r} is not an n-tuple pattern of hex cells "
                          "(only pattern tables can be read)")
    return tuple(int(c, 16) for c in f"{value:0{length}x}")


def write_tdl_weights(path: str | os.PathLike, network: Network) -> None:
    """Write a 2048 afterstate network of 16**n tables shared over 8 isomorphisms (atomically)."""
    if network.game != "2048" or network.spec.clamp is not None:
        raise TD2048Error("TDL2048+'s .w files hold 2048 networks of 16**n tables; this is a "
                          f"{network.game} network{' with a clamp' if network.spec.clamp is not None else ''}")
    if network.spec.stages:
        raise TD2048Error(f"TDL2048+'s .w files hold one stage; this network has "
                          f"{network.spec.n_stages} (td2048 model files hold them)")
    if network.method != "afterstate":
        raise TD2048Error("TDL2048+ plays afterstate values; this network learned state values (--method state)")
    if network.spec.isomorphisms != TDL_ISOMORPHISMS:
        raise TD2048Error(f"TDL2048+ shares each table over 8 isomorphisms; network {network.spec.name} has "
                          f"{network.spec.isomorphisms}")
    with atomic_open(path, "wb") as f:
        f.write(struct.pack("<BI", _FILE_FORMAT, len(network.spec.tuples)))
        for cells, table in zip(network.spec.tuples, network.tables(), strict=True):
            head = struct.pack("<B", _TABLE_FORMAT) + _name_bytes(cells) + struct.pack("<HQ", _VALUE_BYTES, table.size)
            f.write(head)
            f.write(memoryview(np.ascontiguousarray(table, "<f4")).cast("B"))
            f.write(struct.pack("<H", 0))


def read_tdl_weights(path: str | os.PathLike, memory_limit: int | None = None) -> Network:
    """Read a .w file of pattern tables into a td2048 network (8 isomorphisms, 2048)."""
    path = Path(path)
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed below; tables are read into place
    except FileNotFoundError:
        raise TD2048Error(f"{path}: no such file") from None
    except OSError as e:
        raise TD2048Error(f"{path}: cannot read ({e.strerror})") from None
    with f:
        size = os.fstat(f.fileno()).st_size

        def take(fmt):
            raw = f.read(struct.calcsize(fmt))
            if len(raw) != struct.calcsize(fmt):
                raise TD2048Error(f"{path}: truncated TDL2048+ weight file")
            return struct.unpack(fmt, raw)

        file_format, count = take("<BI")
        if file_format != _FILE_FORMAT or not 0 < count <= 64:
            raise TD2048Error(f"{path}: not a TDL2048+ weight file (format {file_format}, {count} tables)")
        tuples, places = [], []
        for _ in range(count):  # the headers first: the sizes, before any weight is read
            (table_format,) = take("<B")
            if table_format != _TABLE_FORMAT:
                raise TD2048Error(f"{path}: table format {table_format} is not plain float32 values "
                                  "(temporal-coherence files are not read)")
            cells = _cells_of(f.read(8), path)
            value_bytes, entries = take("<HQ")
            if value_bytes != _VALUE_BYTES or entries != 16 ** len(cells):
                raise TD2048Error(f"{path}: table {tuple_to_hex(cells)} has {entries} values of {value_bytes} bytes, "
                                  f"expected {16 ** len(cells)} of 4")
            places.append(f.tell())
            f.seek(4 * entries, os.SEEK_CUR)
            (extra,) = take("<H")
            if extra != 0:
                raise TD2048Error(f"{path}: table {tuple_to_hex(cells)} carries extra data (code {extra}) that "
                                  "td2048 does not read")
            tuples.append(cells)
        if f.tell() != size:
            raise TD2048Error(f"{path}: {size - f.tell()} unexpected bytes after the last table")
        spec = NetworkSpec(tuple(tuples), TDL_ISOMORPHISMS)
        limit = max(spec.nbytes, memory_limit or 0)
        if memory_limit is not None and spec.nbytes > memory_limit:
            raise TD2048Error(f"{path}: {format_bytes(spec.nbytes)} of weights exceed the memory limit")
        weights = aligned_zeros(spec.n_weights)
        for place, offset, n in zip(places, spec.table_offsets, spec.table_sizes, strict=True):
            f.seek(place)
            if f.readinto(memoryview(weights[offset:offset + n]).cast("B")) != 4 * n:
                raise TD2048Error(f"{path}: truncated TDL2048+ weight file")
    if weights.dtype.byteorder == ">":  # pragma: no cover - little-endian machines
        weights.byteswap(inplace=True)
    return Network(spec, weights, memory_limit=limit)
