"""The model file (``.td2048``): a network's definition, its weights and where they came from, in one file.

Layout (all integers little-endian)::

    offset 0        8 bytes   magic  b"TD2048\\x1a\\n"
    offset 8        u32       format version (1)
    offset 12       u32       H = length of the header in bytes
    offset 16       H bytes   header: UTF-8 JSON (below)
                              zero bytes up to D = 16 + H rounded up to a multiple of 64
    offset D        4*N bytes the weights: N float32, the tuples' tables one after another, each at its
                              ``offset`` (networks of 16 MiB or more leave a gap after each table:
                              td2048.spec.TABLE_STAGGER; files without gaps load as well)
    offset D + 4N   8N bytes  (version 2 only) TC's accumulators: per weight, its accumulated error
                              and accumulated absolute error, float32 each, interleaved
    offset E        16 bytes  trailer: u64 E, u32 CRC-32 (zlib) of bytes [0, E), b"TDND"
                              (E = D + 4N, or D + 12N with accumulators)

The header holds ``format`` ("td2048-model"), ``version``, ``game`` ("2048"), ``method``
("afterstate" or "state": what the weights value; files without it hold afterstate values), ``network``
(``name``, ``tuples`` as hex strings, ``isomorphisms``, ``cell_bits``), ``weights``
(``dtype`` "<f4", ``count`` N, and per table its ``tuple``, ``offset`` and ``size``; a multistage
network's ``stages`` (threshold masks of tile codes) follow its tuples, its weights hold the stages'
tables one after another and then one marker per stage), ``accumulators`` (version 2: ``count`` 2N),
``training`` (episodes, alpha, update, seed, td2048 version, date) and, in a training run's snapshot
and model, ``state`` (what a resumed run needs). Read the weights with plain NumPy::

    import json, numpy as np
    raw = open("model.td2048", "rb").read()
    h = int.from_bytes(raw[12:16], "little"); header = json.loads(raw[16:16 + h])
    d = (16 + h + 63) // 64 * 64
    w = np.frombuffer(raw, "<f4", count=header["weights"]["count"], offset=d)

A truncated or corrupted file, a file of another format and a newer format version are
refused with one line naming the file; writes are atomic, so a crash during a save leaves the
previous file whole. A file without accumulators is written as version 1, so older td2048 reads it.
A model file compressed with xz (``xz -9 model.td2048``: ``model.td2048.xz``) loads as the file itself:
the reader knows xz's magic and decompresses in memory.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import lzma
import os
import struct
import time
import zlib
from pathlib import Path

import numpy as np

from td2048.errors import TD2048Error
from td2048.games.shape import BoardShape
from td2048.io.atomic import atomic_open
from td2048.network import Network, aligned_bytes, aligned_zeros
from td2048.spec import WEIGHT_STEP, NetworkSpec, tuple_to_hex
from td2048.version import __version__

MAGIC = b"TD2048\x1a\n"
END_MAGIC = b"TDND"
FORMAT = "td2048-model"
VERSION = 2  # 2: TC accumulators after the weights (written only when present)
EXTENSION = ".td2048"
XZ_MAGIC = b"\xfd7zXZ\x00"  # a file that starts so is read through lzma (``.td2048.xz``)
_ALIGN = 64
_PREFIX = struct.Struct("<8sII")
_TRAILER = struct.Struct("<QI4s")


def _data_offset(header_len: int) -> int:
    return (_PREFIX.size + header_len + _ALIGN - 1) // _ALIGN * _ALIGN


def model_header(network: Network, game: str | None = None, training: dict | None = None,
                 state: dict | None = None) -> dict:
    spec = network.spec
    tables = [{"tuple": tuple_to_hex(t), "offset": o, "size": n}
              for t, o, n in zip(spec.tuples, spec.table_offsets, spec.table_sizes, strict=True)]
    header = {
        "format": FORMAT, "version": 1 if network.accumulators is None else 2, "game": game or network.game,
        "method": network.method,
        "network": {**spec.to_dict(), "cell_bits": network.cell_bits},
        "weights": {"dtype": "<f4", "count": int(network.weights.size), "tables": tables},
        "training": {"td2048": __version__, "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                     **(training or {})},
    }
    if network.accumulators is not None:
        header["accumulators"] = {"dtype": "<f4", "count": int(network.accumulators.size),
                                  "layout": "per weight: accumulated error, accumulated absolute error"}
    if state is not None:
        header["state"] = state
    return header


def save_model(path: str | os.PathLike, network: Network, game: str | None = None, training: dict | None = None,
               state: dict | None = None) -> None:
    """Write atomically: temp file in the same directory, fsync, rename."""
    header = json.dumps(model_header(network, game, training, state), separators=(",", ":")).encode()
    offset = _data_offset(len(header))
    version = 1 if network.accumulators is None else 2
    head = _PREFIX.pack(MAGIC, version, len(header)) + header
    head += b"\0" * (offset - len(head))
    crc, size = zlib.crc32(head), 0
    with atomic_open(path, "wb") as f:
        f.write(head)
        _pause_for_tests()
        for piece in _float32_pieces(network):
            data = memoryview(piece).cast("B")
            crc, size = zlib.crc32(data, crc), size + piece.nbytes
            f.write(data)
        f.write(_TRAILER.pack(offset + size, crc, END_MAGIC))


SAVE_PIECE = 1 << 22  # 16-bit weights converted to float32 this many at a time as a model is written (16 MiB)


def _float32_pieces(network: Network):
    """A model's data as little-endian float32 arrays, in order: the weights (16-bit ones converted a piece at a
    time, so that a save holds no float32 copy of the whole table: a model is the same either way), then TC's
    accumulators."""
    w = network.weights
    if network.weight_bits == 16:
        for lo in range(0, w.size, SAVE_PIECE):
            yield np.multiply(w[lo:lo + SAVE_PIECE], np.float32(WEIGHT_STEP), dtype="<f4")
    else:
        yield np.ascontiguousarray(w, dtype="<f4")
    if network.accumulators is not None:
        yield np.ascontiguousarray(network.accumulators, dtype="<f4")


def _decompressed(f, path: Path) -> io.BytesIO:
    """The model file inside an xz stream (``xz -9 model.td2048`` makes one), in memory."""
    f.seek(0)
    try:
        return io.BytesIO(lzma.decompress(f.read()))
    except (lzma.LZMAError, EOFError):
        raise TD2048Error(f"{path}: truncated or damaged compressed model file (xz)") from None


def _pause_for_tests() -> None:
    """Fault injection: ``TD2048_TEST_SLOW_SAVE=SECONDS`` holds every save half-written that long,
    so tests can kill a real process in the middle of writing a snapshot."""
    pause = os.environ.get("TD2048_TEST_SLOW_SAVE")
    if pause:
        time.sleep(float(pause))


@contextlib.contextmanager
def _open_model(path: Path):
    """A model file opened for reading; a missing file, a directory or no permission is a one-line TD2048Error."""
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        raise TD2048Error(f"{path}: no such file") from None
    except IsADirectoryError:
        raise TD2048Error(f"{path}: is a directory, not a model file") from None
    except PermissionError:
        raise TD2048Error(f"{path}: permission denied") from None
    with f:
        yield f


def _header_length(path: Path, prefix: bytes) -> int:
    """The JSON header's length from a model file's first bytes, once they are checked (magic, version)."""
    if len(prefix) < _PREFIX.size or prefix[:8] != MAGIC:
        raise TD2048Error(f"{path}: not a td2048 model file")
    _, version, header_len = _PREFIX.unpack(prefix)
    if version > VERSION:
        raise TD2048Error(f"{path}: model format version {version} is newer than this td2048 reads "
                          f"(version {VERSION}); upgrade td2048")
    if version < 1:
        raise TD2048Error(f"{path}: bad model format version {version}")
    return header_len


def read_model(path: str | os.PathLike) -> tuple[dict, np.ndarray]:
    """Header and weights, checked; any defect is a :class:`TD2048Error` naming the file.
    TC's accumulators, when the file holds them, come as ``header["_accumulators"]`` (load_model
    gives them to the network)."""
    path = Path(path)
    with _open_model(path) as f:
        size = os.fstat(f.fileno()).st_size
        if f.read(len(XZ_MAGIC)) == XZ_MAGIC:  # a compressed model (.td2048.xz): the same bytes inside
            f = _decompressed(f, path)
            size = f.getbuffer().nbytes
        f.seek(0)
        header_len = _header_length(path, f.read(_PREFIX.size))
        offset = _data_offset(header_len)
        if size < offset + _TRAILER.size:
            raise TD2048Error(f"{path}: truncated model file")
        buf = aligned_bytes(size, zeroed=False)  # the weights, at a multiple of 64 in the file, start on a line
        f.seek(0)
        if f.readinto(memoryview(buf)) != size:
            raise TD2048Error(f"{path}: truncated model file")
    end, crc, end_magic = _TRAILER.unpack(buf[size - _TRAILER.size:].tobytes())
    if end_magic != END_MAGIC or end != size - _TRAILER.size:
        raise TD2048Error(f"{path}: truncated or damaged model file (bad trailer)")
    if zlib.crc32(memoryview(buf)[:end]) != crc:
        raise TD2048Error(f"{path}: corrupted model file (checksum mismatch)")
    try:
        header = json.loads(buf[_PREFIX.size:_PREFIX.size + header_len].tobytes())
        count = int(header["weights"]["count"])
        extra = int(header.get("accumulators", {}).get("count", 0))
    except (ValueError, KeyError, TypeError, AttributeError):
        raise TD2048Error(f"{path}: damaged model header") from None
    if header.get("format") != FORMAT or offset + 4 * (count + extra) != end or extra not in (0, 2 * count):
        raise TD2048Error(f"{path}: inconsistent model header")
    weights = buf[offset:offset + 4 * count].view("<f4")
    header["_accumulators"] = buf[offset + 4 * count:end].view("<f4") if extra else None
    return header, weights


def read_header(path: str | os.PathLike) -> dict:
    """A model file's header alone, without reading its weights.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.td2048`` file (or one compressed with xz, which is read whole and checked).

    Returns
    -------
    dict
        The header (``training``, and ``state`` in what a training run wrote). Unlike :func:`read_model`,
        the checksum is not verified: the file's weights are not read.

    Raises
    ------
    TD2048Error
        When the file is missing, not a model file, of a newer format version, or its header is damaged.
    """
    path = Path(path)
    with _open_model(path) as f:
        prefix = f.read(_PREFIX.size)
        if prefix.startswith(XZ_MAGIC):
            compressed = True
        else:
            compressed = False
            raw = f.read(_header_length(path, prefix))
    if compressed:
        header = read_model(path)[0]
        header.pop("_accumulators", None)
        return header
    try:
        header = json.loads(raw)
    except ValueError:
        raise TD2048Error(f"{path}: truncated model file or damaged model header") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise TD2048Error(f"{path}: damaged model header")
    return header


def load_model(path: str | os.PathLike, game: str | None = None, memory_limit: int | None = None,
               method: str | None = None) -> tuple[Network, dict]:
    """The network in a model file, for the game it was trained on and with its method of learning;
    ``game`` or ``method`` given: refuse any other."""
    header, weights = read_model(path)
    if game is not None and header.get("game") != game:
        raise TD2048Error(f"{path}: a model for the game {header.get('game')}, not {game}")
    saved_method = header.get("method", "afterstate")
    if method is not None and saved_method != method:
        raise TD2048Error(f"{path}: a model of {saved_method} values (--method {saved_method}), not {method}")
    try:
        net = header["network"]
        clamp = net.get("clamp")
        spec = NetworkSpec(tuple(tuple(int(c, 16) for c in t) for t in net["tuples"]), int(net["isomorphisms"]),
                           net.get("name", ""), None if clamp is None else int(clamp),
                           tuple(int(m) for m in net.get("stages", ())), BoardShape.parse(net.get("board", "4x4")))
    except (KeyError, ValueError, TypeError, TD2048Error) as e:
        raise TD2048Error(f"{path}: damaged network definition ({e})") from None
    accumulators = header.pop("_accumulators", None)
    if spec.n_weights != weights.size:
        if spec.weight_count(0) != weights.size:
            raise TD2048Error(f"{path}: network {spec.name} needs {spec.n_weights} weights, the file holds "
                              f"{weights.size}")
        weights = _staggered(spec, weights, 1)  # a file of before the tables were staggered
        accumulators = None if accumulators is None else _staggered(spec, accumulators, 2)
    limit = max(spec.nbytes * (3 if accumulators is not None else 1), memory_limit or 0)
    try:
        network = Network(spec, weights.astype(np.float32, copy=False), memory_limit=limit, game=header.get("game"),
                          cell_bits=int(net.get("cell_bits", 4)), method=saved_method, accumulators=accumulators)
    except TD2048Error as e:
        raise TD2048Error(f"{path}: {e}") from None
    return network, header


def _staggered(spec: NetworkSpec, flat: np.ndarray, per_weight: int) -> np.ndarray:
    """Weights (``per_weight`` 1) or TC accumulators (2, interleaved) of tables back to back, as files held
    them before TABLE_STAGGER, in the network's layout."""
    old_offsets, old_stage = spec.layout(0)
    out = aligned_zeros(per_weight * spec.n_weights)
    for stage in range(spec.n_stages):
        for new, old, size in zip(spec.table_offsets, old_offsets, spec.table_sizes, strict=True):
            a, b, n = (per_weight * (stage * spec.stage_weights + new), per_weight * (stage * old_stage + old),
                       per_weight * size)
            out[a:a + n] = flat[b:b + n]
    out[per_weight * spec.stage_markers:] = flat[per_weight * old_stage * spec.n_stages:]
    return out


def check_same_network(path, header: dict, spec: NetworkSpec) -> None:
    """Refuse to use a model with another network than the one asked for."""
    theirs = header["network"]
    if theirs.get("board", "4x4") != spec.board.name:
        raise TD2048Error(f"{path}: a model of the {theirs.get('board', '4x4')} board, not {spec.board}")
    if theirs["tuples"] != [tuple_to_hex(t) for t in spec.tuples] or theirs["isomorphisms"] != spec.isomorphisms \
            or theirs.get("clamp") != spec.clamp or list(theirs.get("stages", [])) != list(spec.stages):
        clamp = f", clamp {theirs.get('clamp')}" if theirs.get("clamp") is not None else ""
        stages = f", {len(theirs['stages']) + 1} stages" if theirs.get("stages") else ""
        ours = f"{spec.name}, {spec.n_stages} stages" if spec.stages else spec.name
        raise TD2048Error(f"{path}: holds network {theirs.get('name')} ({' '.join(theirs['tuples'])}, "
                          f"{theirs['isomorphisms']} isomorphisms{clamp}{stages}), not {ours}")
