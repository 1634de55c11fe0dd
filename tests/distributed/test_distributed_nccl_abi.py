"""The NCCL backend's ctypes bindings against a stand-in libnccl built from
tests/distributed/nccl_stub.c (nccl.h's signatures), so CI without a GPU checks what the real
library depends on: the 128-byte ncclUniqueId passed BY VALUE to ncclCommInitRank, every byte
of it (NULs included) carried from rank 0 to the others through the TCP store, 64-bit counts
and stream pointers, and a failed init that says what failed and how to find out more."""
import ctypes
import datetime
import os
import shutil
import subprocess
import threading

import pytest

from tessera.distributed import DistBackendError, PrefixStore, TCPStore
from tessera.distributed import nccl_backend as nb

STUB_SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nccl_stub.c")


@pytest.fixture(scope="module")
def stub_path(tmp_path_factory) -> str:
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    assert cc, "a C compiler is needed to build the NCCL stand-in (CI builds tessera with one)"
    out = str(tmp_path_factory.mktemp("nccl") / "libnccl_stub.so")
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-Wall", "-Werror", STUB_SRC, "-o", out],
                   check=True)
    return out


@pytest.fixture
def stub(stub_path, monkeypatch):
    monkeypatch.setenv("TESSERA_NCCL_LIBRARY", stub_path)
    monkeypatch.setattr(nb, "_lib", None)
    monkeypatch.setattr(nb, "_lib_path", "")
    L = nb.lib()
    L.stub_last_count.restype = ctypes.c_size_t
    L.stub_last_stream.restype = ctypes.c_void_p
    return L


def _made_id() -> bytes:
    return bytes(0 if i % 5 == 0 else (i * 37 + 11) & 255 for i in range(128))


def test_unique_id_travels_whole_through_the_tcp_store_and_is_passed_by_value(stub) -> None:
    world = 3
    master = TCPStore("127.0.0.1", 0, world, is_master=True,
                      timeout=datetime.timedelta(seconds=10))
    stores = [master] + [TCPStore("127.0.0.1", master.port, world, timeout=10)
                         for _ in range(world - 1)]
    comms, errors = [None] * world, []

    def rank(r: int) -> None:
        try:
            uid = nb.exchange_unique_id(PrefixStore("tessera/1", stores[r]), r, "nccl/id")
            comms[r] = nb.comm_init_rank(uid, world, r, device=r)
        except Exception as e:          # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=rank, args=(r,)) for r in (2, 1, 0)]  # 0 comes last
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert not errors, errors
    for r in range(world):
        got = nb._UniqueId()
        stub.stub_received(r, ctypes.byref(got))
        assert bytes(got) == _made_id(), f"rank {r} passed another id to ncclCommInitRank"
        assert comms[r].value == 0x1000 + r
    for s in stores:
        s.close()


def test_counts_and_streams_keep_64_bits(stub) -> None:
    comm = ctypes.c_void_p(0x1000)
    stream = 0x7F12_3456_7890
    count = 3 * 2**32 + 5
    assert stub.ncclAllReduce(ctypes.c_void_p(16), ctypes.c_void_p(16), count, 7, 4, comm,
                              stream) == 0
    assert stub.stub_last_count() == count
    assert stub.stub_last_stream() == stream
    assert stub.stub_last_dtype_op() == 704


def test_failed_init_names_the_rank_device_error_and_library(stub, stub_path) -> None:
    uid = nb._UniqueId()
    with pytest.raises(DistBackendError) as e:
        nb.comm_init_rank(uid, 2, 5, device=1)
    msg = str(e.value)
    for part in ("ncclCommInitRank", "rank 5 of 2", "cuda:1", "invalid argument",
                 "stub: rank out of range", "2.28.3", stub_path, "set_device"):
        assert part in msg, (part, msg)


def test_a_short_id_in_the_store_is_refused(stub) -> None:
    from tessera.distributed import HashStore
    s = HashStore()
    s.set("nccl/id", b"\x00" * 100)
    with pytest.raises(DistBackendError, match="100 bytes, expected 128"):
        nb.exchange_unique_id(s, 1, "nccl/id")


def test_missing_library_says_which_wheel(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("TESSERA_NCCL_LIBRARY", str(tmp_path / "nope.so"))
    monkeypatch.setattr(nb, "_lib", None)
    with pytest.raises(RuntimeError, match="nvidia-nccl-cu13"):
        nb.lib()


@pytest.mark.parametrize("device_id,current,local,want", [
    (1, 0, None, 1), ("cuda:1", 0, "0", 1), (None, 0, "1", 1), (None, 1, "0", 1),
    (None, 0, None, 0), (None, 0, "3", 1), (None, 0, "x", 0)])
def test_the_communicators_device(monkeypatch, device_id, current, local, want) -> None:
    """device_id= first, then the current device, except that a process still on cuda:0 with
    LOCAL_RANK=k takes cuda:k (mod the device count): the GPU PyTorch's NCCL group would use."""
    import tessera as ts
    monkeypatch.setattr(ts.cuda, "current_device", lambda: current)
    monkeypatch.setattr(ts.cuda, "device_count", lambda: 2)
    if local is None:
        monkeypatch.delenv("LOCAL_RANK", raising=False)
    else:
        monkeypatch.setenv("LOCAL_RANK", local)
    assert nb._pick_device(device_id) == want
    if device_id is not None:
        assert nb._pick_device(ts.device(f"cuda:{want}") if hasattr(ts, "device") else want) \
            == want
