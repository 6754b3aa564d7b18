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
        extra fields, each: u16 bytes per value (0 ends them), u64 count, the values; TDL2048+'s
        temporal coherence (-a 1.0) writes one: 4, 2 * entries, then its accumulated errors
        and accumulated absolute errors, f32[entries] each (td2048's TC accumulators, which
        td2048 interleaves per weight); others are skipped

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
from td2048.network import Network, aligned_zeros
from td2048.spec import NetworkSpec, format_bytes, tuple_to_hex

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
    """Write a 2048 afterstate network of 16**n tables shared over 8 isomorphisms (atomically), with TC's
    accumulators when it has them."""
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
    acc = network.accumulators
    with atomic_open(path, "wb") as f:
        f.write(struct.pack("<BI", _FILE_FORMAT, len(network.spec.tuples)))
        for cells, table, offset in zip(network.spec.tuples, network.tables(), network.spec.table_offsets,
                                        strict=True):
            head = struct.pack("<B", _TABLE_FORMAT) + _name_bytes(cells) + struct.pack("<HQ", _VALUE_BYTES, table.size)
            f.write(head)
            f.write(memoryview(np.ascontiguousarray(table, "<f4")).cast("B"))
            if acc is not None:  # TC's accumulators, as TDL2048+ writes them: it goes on learning from them
                f.write(struct.pack("<HQ", _VALUE_BYTES, 2 * table.size))
                for half in (0, 1):
                    column = acc[2 * offset + half:2 * (offset + table.size):2]
                    f.write(memoryview(np.ascontiguousarray(column, "<f4")).cast("B"))
            f.write(struct.pack("<H", 0))


def read_tdl_weights(path: str | os.PathLike, memory_limit: int | None = None) -> Network:
    """Read a .w file of pattern tables into a td2048 network (8 isomorphisms, 2048), with TC's accumulators
    when TDL2048+ wrote them (a run with temporal coherence)."""
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
        tuples, places, coherence = [], [], []
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
            coherence_at = None
            while True:  # the extra fields
                (value_bytes,) = take("<H")
                if value_bytes == 0:
                    break
                (n,) = take("<Q")
                if coherence_at is None and value_bytes == 4 and n == 2 * entries:
                    coherence_at = f.tell()
                f.seek(value_bytes * n, os.SEEK_CUR)
                if f.tell() > size:
                    raise TD2048Error(f"{path}: truncated TDL2048+ weight file")
            coherence.append(coherence_at)
            tuples.append(cells)
        if f.tell() != size:
            raise TD2048Error(f"{path}: {size - f.tell()} unexpected bytes after the last table")
        spec = NetworkSpec(tuple(tuples), TDL_ISOMORPHISMS)
        tc = all(at is not None for at in coherence)  # a TC file: every table carries its accumulators
        needed = spec.nbytes * (3 if tc else 1)
        limit = max(needed, memory_limit or 0)
        if memory_limit is not None and needed > memory_limit:
            raise TD2048Error(f"{path}: {format_bytes(needed)} of weights{' and TC accumulators' if tc else ''} "
                              "exceed the memory limit")
        weights = aligned_zeros(spec.n_weights)
        accumulators = aligned_zeros(2 * spec.n_weights) if tc else None
        for i, (offset, n) in enumerate(zip(spec.table_offsets, spec.table_sizes, strict=True)):
            f.seek(places[i])
            _read_into(f, weights[offset:offset + n], path)
            if tc:
                f.seek(coherence[i])
                for half in (0, 1):  # accumulated errors, then accumulated absolute errors
                    column = np.empty(n, np.float32)
                    _read_into(f, column, path)
                    accumulators[2 * offset + half:2 * (offset + n):2] = column
    return Network(spec, weights, memory_limit=limit, accumulators=accumulators)


def _read_into(f, array: np.ndarray, path: Path) -> None:
    """Fill a float32 array from the file's little-endian values."""
    if f.readinto(memoryview(array).cast("B")) != array.nbytes:
        raise TD2048Error(f"{path}: truncated TDL2048+ weight file")
    if array.dtype.byteorder == ">":  # pragma: no cover - little-endian machines
        array.byteswap(inplace=True)
