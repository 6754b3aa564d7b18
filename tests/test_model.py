"""Model files: round trip, and every kind of bad file refused with one line (library and CLI)."""

import json
import struct
import subprocess
import sys

import numpy as np
import pytest

from td2048.errors import TD2048Error
from td2048.io.model import load_model, read_model, save_model
from td2048.network import Network, parse_network


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
    r = subprocess.run([sys.executable, "-m", "td2048.cli", "eval", str(bad), "--games", "1"],
                       capture_output=True, text=True)
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
    r = subprocess.run([sys.executable, "-m", "td2048.cli", "train", "--game", "2048", "--init",
                        str(tmp_path / "fib.td2048"), "--episodes", "10", "--out", str(tmp_path / "r2")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "game 2584, not 2048" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = subprocess.run([sys.executable, "-m", "td2048.cli", "train", "--init", str(path), "--network", "4x6",
                        "--episodes", "10", "--out", str(tmp_path / "run")], capture_output=True, text=True)
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
