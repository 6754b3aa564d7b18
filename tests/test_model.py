"""Model files: round trip, and every kind of bad file refused with one line (library and CLI)."""

import json
import struct

import numpy as np
import pytest
from commands import td2048

from td2048.errors import TD2048Error
from td2048.io.model import load_model, read_model, save_model
from td2048.network import Network, parse_network
from td2048.spec import parse_stages


@pytest.fixture
def model(tmp_path):
    net = Network(parse_network("2x4"))
    net.weights[:] = np.random.default_rng(0).standard_normal(net.weights.size).astype(np.float32)
    path = tmp_path / "m.td2048"
    save_model(path, net, training={"episodes": 123, "alpha": 0.1})
    return path, net


def test_round_trip_and_documented_layout(model):
    path, net = model
    loaded, header = load_model(path)
    assert np.array_equal(loaded.weights, net.weights)
    assert loaded.spec == net.spec and header["training"]["episodes"] == 123 and header["game"] == "2048"
    # the README's recipe with plain NumPy
    raw = path.read_bytes()
    h = int.from_bytes(raw[12:16], "little")
    head = json.loads(raw[16:16 + h])
    d = (16 + h + 63) // 64 * 64
    w = np.frombuffer(raw, "<f4", count=head["weights"]["count"], offset=d)
    assert np.array_equal(w, net.weights)
    assert [t["tuple"] for t in head["weights"]["tables"]] == ["0123", "4567"]


def test_files_with_tables_back_to_back_load_into_the_staggered_layout(tmp_path, monkeypatch):
    """Large networks leave gaps between their tables (td2048.spec.TABLE_STAGGER); their model files of
    before, tables back to back, still load, TC accumulators and every stage included. Here 2x4 is made to
    count as large."""
    import td2048.spec as spec_module

    spec = parse_network("2x4", stages=parse_stages("1024"))
    before = Network(spec, accumulators=np.zeros(2 * spec.n_weights, np.float32))
    rng = np.random.default_rng(1)
    before.weights[:] = rng.standard_normal(before.weights.size).astype(np.float32)
    before.accumulators[:] = rng.standard_normal(before.accumulators.size).astype(np.float32)
    save_model(tmp_path / "old.td2048", before)
    assert spec.stagger == 0
    monkeypatch.setattr(spec_module, "STAGGERED_BYTES", 0)
    stagger, (old_offsets, old_stage) = spec.stagger, spec.layout(0)
    assert stagger > 0 and spec.table_offsets == [0, 65536 + stagger] and spec.n_weights > before.weights.size

    loaded, _ = load_model(tmp_path / "old.td2048")
    assert loaded.weights.size == spec.n_weights and loaded.accumulators.size == 2 * spec.n_weights
    for stage in range(spec.n_stages):
        for new, old, size in zip(spec.table_offsets, old_offsets, spec.table_sizes):
            a, b = stage * spec.stage_weights + new, stage * old_stage + old
            assert np.array_equal(loaded.weights[a:a + size], before.weights[b:b + size])
            assert np.array_equal(loaded.accumulators[2 * a:2 * (a + size)], before.accumulators[2 * b:2 * (b + size)])
    assert np.array_equal(loaded.weights[spec.stage_markers:], before.weights[old_stage * spec.n_stages:])
    gaps = np.ones(spec.n_weights, bool)
    for stage in range(spec.n_stages):
        for new, size in zip(spec.table_offsets, spec.table_sizes):
            gaps[stage * spec.stage_weights + new:stage * spec.stage_weights + new + size] = False
    gaps[spec.stage_markers:] = False
    assert not loaded.weights[gaps].any()
    save_model(tmp_path / "new.td2048", loaded)  # written as laid out now, and read back as it is
    again, header = load_model(tmp_path / "new.td2048")
    assert np.array_equal(again.weights, loaded.weights) and np.array_equal(again.accumulators, loaded.accumulators)
    assert [t["offset"] for t in header["weights"]["tables"]] == spec.table_offsets


def damaged(path, kind):
    raw = bytearray(path.read_bytes())
    if kind == "truncated":
        return bytes(raw[: len(raw) // 2])
    if kind == "truncated-header":
        return bytes(raw[:10])
    if kind == "corrupt":
        raw[len(raw) // 2] ^= 0x40
        return bytes(raw)
    if kind == "foreign":
        return b"\x89PNG\r\n\x1a\n" + bytes(raw[8:])
    if kind == "future":
        raw[8:12] = struct.pack("<I", 99)
        return bytes(raw)
    if kind == "empty":
        return b""
    raise ValueError(kind)


CASES = {"truncated": "truncated", "truncated-header": "not a td2048 model", "corrupt": "checksum",
         "foreign": "not a td2048 model", "future": "newer than this td2048 reads", "empty": "not a td2048 model"}


@pytest.mark.parametrize("kind", CASES)
def test_bad_files_are_refused(model, tmp_path, kind):
    path, _ = model
    bad = tmp_path / f"{kind}.td2048"
    bad.write_bytes(damaged(path, kind))
    with pytest.raises(TD2048Error, match=CASES[kind]) as err:
        load_model(bad)
    assert str(bad) in str(err.value) and "\n" not in str(err.value)
    r = td2048("eval", str(bad), "--games", "1")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert CASES[kind] in r.stderr


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(TD2048Error, match="no such file"):
        read_model(tmp_path / "nope.td2048")
    with pytest.raises(TD2048Error, match="is a directory"):
        read_model(tmp_path)


def test_another_game_or_network_is_refused(model, tmp_path):
    path, net = model
    save_model(tmp_path / "fib.td2048", Network(parse_network("2x4", clamp=18), game="2584"))
    assert load_model(tmp_path / "fib.td2048")[0].game == "2584"  # a model plays the game it was made for
    with pytest.raises(TD2048Error, match="game 2584, not 2048"):
        load_model(tmp_path / "fib.td2048", game="2048")
    r = td2048("train", "--game", "2048", "--init",
               str(tmp_path / "fib.td2048"), "--episodes", "10", "--out", str(tmp_path / "r2"))
    assert r.returncode == 2 and "game 2584, not 2048" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = td2048("train", "--init", str(path), "--network", "4x6", "--episodes", "10", "--out", str(tmp_path / "run"))
    assert r.returncode == 2 and "holds network 2x4" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_save_is_atomic_and_keeps_the_old_file_on_failure(model, tmp_path, monkeypatch):
    path, net = model
    before = path.read_bytes()
    other = Network(parse_network("2x4"))

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("td2048.io.model.zlib.crc32", fail)  # fails midway through the save
    with pytest.raises(OSError):
        save_model(path, other)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["m.td2048"]  # no temp file left behind
