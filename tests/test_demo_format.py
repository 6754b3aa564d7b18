"""The course demo's binary weight file: export, import, and a file built byte by byte from its documented layout."""

import struct

import numpy as np
from commands import td2048

from td2048.io.demo import read_demo_weights, write_demo_weights
from td2048.io.model import load_model, save_model
from td2048.play import evaluate
from td2048.settings import TrainSettings
from td2048.training import train


def trained(network="2x4", episodes=300):
    net, _ = train(TrainSettings(network=network, episodes=episodes, block=episodes, seed=2))
    return net


def test_export_reads_back_identically(tmp_path):
    net = trained()
    write_demo_weights(tmp_path / "w.bin", net)
    back = read_demo_weights(tmp_path / "w.bin")
    assert back.spec.tuples == net.spec.tuples and back.spec.isomorphisms == 8 and back.spec.name == "2x4"
    assert np.array_equal(back.weights, net.weights)
    write_demo_weights(tmp_path / "again.bin", back)
    assert (tmp_path / "again.bin").read_bytes() == (tmp_path / "w.bin").read_bytes()


def test_file_built_from_the_documented_bytes_evaluates_like_the_native_model(tmp_path):
    net = trained()
    raw = struct.pack("<Q", len(net.spec.tuples))
    for cells, table in zip(net.spec.tuples, net.tables(), strict=True):
        name = f"{len(cells)}-tuple pattern {''.join(f'{c:x}' for c in cells)}".encode()
        raw += struct.pack("<i", len(name)) + name + struct.pack("<Q", len(table)) + table.astype("<f4").tobytes()
    (tmp_path / "demo.bin").write_bytes(raw)
    save_model(tmp_path / "native.td2048", net)

    r = td2048("convert", str(tmp_path / "demo.bin"), str(tmp_path / "imported.td2048"))
    assert r.returncode == 0, r.stderr
    imported, _ = load_model(tmp_path / "imported.td2048")
    native, _ = load_model(tmp_path / "native.td2048")
    a = evaluate(imported, 200, seed=9)
    b = evaluate(native, 200, seed=9)
    assert a.to_json() | {"seconds": 0, "moves_per_s": 0} == b.to_json() | {"seconds": 0, "moves_per_s": 0}

    r = td2048("convert", str(tmp_path / "native.td2048"), str(tmp_path / "exported.bin"))
    assert r.returncode == 0 and (tmp_path / "exported.bin").read_bytes() == raw


def test_bad_demo_files(tmp_path):
    for name, data, message in [
        ("short.bin", struct.pack("<Q", 1) + struct.pack("<i", 22) + b"4-tuple pattern 0123", "truncated"),
        ("count.bin", struct.pack("<Q", 10**9), "not a demo weight file"),
        ("name.bin", struct.pack("<Q", 1) + struct.pack("<i", 5) + b"hello" + struct.pack("<Q", 16), "not of the form"),
    ]:
        (tmp_path / name).write_bytes(data)
        r = td2048("convert", str(tmp_path / name), str(tmp_path / "out.td2048"))
        assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = td2048("convert", "a.txt", "b.txt")
    assert r.returncode == 2 and "direction" in r.stderr
