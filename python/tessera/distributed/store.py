"""The rendezvous key-value store: PyTorch's ``TCPStore``/``FileStore`` protocol, written here.

Ranks meet through it (who is rank 0, the MPI port name, the NCCL unique id, barriers of the
launcher); no tensor data goes through it. ``TCPStore`` runs a threaded server in the process
that hosts it (rank 0, or the launcher) and speaks a small length-prefixed protocol:
one command byte, then fields as (8-byte big-endian length, bytes). ``get`` and ``wait`` block
until the keys exist or the timeout passes, then raise :class:`DistStoreError`.
"""
from __future__ import annotations

import datetime as _datetime
import fcntl as _fcntl
import os as _os
import socket as _socket
import socketserver as _socketserver
import struct as _struct
import threading as _threading
import time as _time
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Dict, List, Optional, Union

__all__ = ["Store", "TCPStore", "FileStore", "HashStore", "PrefixStore", "DistError",
           "DistStoreError", "DistBackendError"]

_SET, _GET, _ADD, _CHECK, _DELETE, _NUMKEYS, _WAIT = range(7)
_MAX_FIELD = 1 << 31          # refuse absurd lengths from the wire before allocating


class DistError(RuntimeError):
    """Base class of tessera.distributed's errors (a RuntimeError, as PyTorch's)."""


class DistStoreError(DistError):
    """The store timed out or its server went away."""


class DistBackendError(DistError):
    """A collective failed or timed out (a peer died, a mismatched call)."""


def _seconds(timeout: Union[None, float, _datetime.timedelta]) -> float:
    if timeout is None:
        return 300.0
    if isinstance(timeout, _datetime.timedelta):
        return timeout.total_seconds()
    return float(timeout)


class Store:
    """Interface of the key-value stores (PyTorch's ``c10d::Store``)."""

    timeout: float

    def set(self, key: str, value: Union[str, bytes]) -> None:
        raise NotImplementedError

    def get(self, key: str) -> bytes:
        raise NotImplementedError

    def add(self, key: str, amount: int) -> int:
        raise NotImplementedError

    def check(self, keys: List[str]) -> bool:
        raise NotImplementedError

    def delete_key(self, key: str) -> bool:
        raise NotImplementedError

    def num_keys(self) -> int:
        raise NotImplementedError

    def wait(self, keys: List[str], timeout: Optional[_datetime.timedelta] = None) -> None:
        deadline = _time.monotonic() + (self.timeout if timeout is None else _seconds(timeout))
        delay = 0.001
        while not self.check(keys):
            if _time.monotonic() > deadline:
                raise DistStoreError(f"Store.wait: timed out after waiting for keys {keys}")
            _time.sleep(delay)
            delay = min(delay * 2, 0.05)

    def set_timeout(self, timeout: _datetime.timedelta) -> None:
        self.timeout = _seconds(timeout)


def _as_bytes(value: Union[str, bytes]) -> bytes:
    return value.encode() if isinstance(value, str) else bytes(value)


class _Table:
    """The server's state: a dict and a condition variable for blocking gets."""

    def __init__(self) -> None:
        self.data: Dict[bytes, bytes] = {}
        self.cond = _threading.Condition()


def _recv_exact(sock: _socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("store connection closed")
        buf += chunk
    return bytes(buf)


def _recv_field(sock: _socket.socket) -> bytes:
    (n,) = _struct.unpack(">Q", _recv_exact(sock, 8))
    if n > _MAX_FIELD:
        raise ConnectionError(f"store: field of {n} bytes refused")
    return _recv_exact(sock, n)


def _pack(*fields: bytes) -> bytes:
    return b"".join(_struct.pack(">Q", len(f)) + f for f in fields)


class _Handler(_socketserver.BaseRequestHandler):
    def handle(self) -> None:
        table: _Table = self.server.table  # type: ignore[attr-defined]
        sock = self.request
        sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
        try:
            while True:
                cmd = _recv_exact(sock, 1)[0]
                if cmd == _SET:
                    k, v = _recv_field(sock), _recv_field(sock)
                    with table.cond:
                        table.data[k] = v
                        table.cond.notify_all()
                    sock.sendall(b"\x01")
                elif cmd in (_GET, _WAIT):
                    k = _recv_field(sock)
                    (timeout,) = _struct.unpack(">d", _recv_exact(sock, 8))
                    with table.cond:
                        ok = table.cond.wait_for(lambda: k in table.data, timeout)
                        v = table.data.get(k, b"")
                    if not ok:
                        sock.sendall(b"\x00")
                    else:
                        sock.sendall(b"\x01" + (_pack(v) if cmd == _GET else b""))
                elif cmd == _ADD:
                    k = _recv_field(sock)
                    (amount,) = _struct.unpack(">q", _recv_exact(sock, 8))
                    with table.cond:
                        v = int(table.data.get(k, b"0")) + amount
                        table.data[k] = str(v).encode()
                        table.cond.notify_all()
                    sock.sendall(_struct.pack(">q", v))
                elif cmd == _CHECK:
                    (n,) = _struct.unpack(">I", _recv_exact(sock, 4))
                    keys = [_recv_field(sock) for _ in range(n)]
                    with table.cond:
                        ok = all(k in table.data for k in keys)
                    sock.sendall(b"\x01" if ok else b"\x00")
                elif cmd == _DELETE:
                    k = _recv_field(sock)
                    with table.cond:
                        ok = table.data.pop(k, None) is not None
                    sock.sendall(b"\x01" if ok else b"\x00")
                elif cmd == _NUMKEYS:
                    with table.cond:
                        n = len(table.data)
                    sock.sendall(_struct.pack(">q", n))
                else:
                    return
        except (ConnectionError, OSError, _struct.error):
            return


class _Server(_socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class TCPStore(Store):
    """PyTorch's TCPStore: ``TCPStore(host, port, world_size=None, is_master=False,
    timeout=timedelta(seconds=300), wait_for_workers=True)``. The master hosts the server in a
    daemon thread (port 0 picks a free port, read back from ``.port``); every instance,
    master included, talks to it through a client socket. world_size and wait_for_workers
    are accepted for PyTorch's signature: ranks meet in the backend's own rendezvous."""

    def __init__(self, host_name: str, port: int, world_size: Optional[int] = None,
                 is_master: bool = False,
                 timeout: Union[float, _datetime.timedelta] = _datetime.timedelta(seconds=300),
                 wait_for_workers: bool = True, multi_tenant: bool = False) -> None:
        self.host, self.timeout = host_name, _seconds(timeout)
        self._server: Optional[_Server] = None
        if is_master:
            self._server = _Server(("", int(port)), _Handler)
            self._server.table = _Table()  # type: ignore[attr-defined]
            port = self._server.server_address[1]
            _threading.Thread(target=self._server.serve_forever, daemon=True,
                             name="tessera-store").start()
        self.port = int(port)
        self._lock = _threading.Lock()
        self._sock = self._connect()

    def _connect(self) -> _socket.socket:
        deadline = _time.monotonic() + self.timeout
        delay = 0.01
        while True:
            try:
                s = _socket.create_connection((self.host, self.port), timeout=self.timeout)
                s.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
                s.settimeout(None)
                return s
            except OSError as e:
                if _time.monotonic() > deadline:
                    raise DistStoreError(f"TCPStore: could not reach {self.host}:{self.port} "
                                         f"within {self.timeout:.0f} s ({e}); is MASTER_ADDR/"
                                         "MASTER_PORT right and rank 0 running?") from e
                _time.sleep(delay)
                delay = min(delay * 2, 0.5)

    def _call(self, payload: bytes, reply_len: int, timeout: Optional[float] = None) -> bytes:
        with self._lock:
            try:
                self._sock.settimeout(None if timeout is None else timeout + 5.0)
                self._sock.sendall(payload)
                return _recv_exact(self._sock, reply_len)
            except (OSError, ConnectionError) as e:
                raise DistStoreError(f"TCPStore: connection to {self.host}:{self.port} "
                                     f"lost ({e})") from e

    def set(self, key: str, value: Union[str, bytes]) -> None:
        self._call(bytes([_SET]) + _pack(key.encode(), _as_bytes(value)), 1)

    def get(self, key: str) -> bytes:
        with self._lock:
            try:
                self._sock.settimeout(self.timeout + 5.0)
                self._sock.sendall(bytes([_GET]) + _pack(key.encode())
                                   + _struct.pack(">d", self.timeout))
                ok = _recv_exact(self._sock, 1)
                if ok != b"\x01":
                    raise DistStoreError(f"TCPStore.get: timed out after {self.timeout:.1f} s "
                                         f"waiting for key {key!r}")
                return _recv_field(self._sock)
            except (OSError, ConnectionError) as e:
                raise DistStoreError(f"TCPStore: connection to {self.host}:{self.port} "
                                     f"lost ({e})") from e

    def wait(self, keys: List[str], timeout: Optional[_datetime.timedelta] = None) -> None:
        t = self.timeout if timeout is None else _seconds(timeout)
        deadline = _time.monotonic() + t
        for k in keys:
            left = max(deadline - _time.monotonic(), 0.0)
            r = self._call(bytes([_WAIT]) + _pack(k.encode()) + _struct.pack(">d", left), 1, left)
            if r != b"\x01":
                raise DistStoreError(f"TCPStore.wait: timed out after {t:.1f} s waiting for "
                                     f"keys {keys}")

    def add(self, key: str, amount: int) -> int:
        r = self._call(bytes([_ADD]) + _pack(key.encode()) + _struct.pack(">q", int(amount)), 8)
        return _struct.unpack(">q", r)[0]

    def check(self, keys: List[str]) -> bool:
        payload = bytes([_CHECK]) + _struct.pack(">I", len(keys)) + b"".join(
            _pack(k.encode()) for k in keys)
        return self._call(payload, 1) == b"\x01"

    def delete_key(self, key: str) -> bool:
        return self._call(bytes([_DELETE]) + _pack(key.encode()), 1) == b"\x01"

    def num_keys(self) -> int:
        return _struct.unpack(">q", self._call(bytes([_NUMKEYS]), 8))[0]

    def close(self) -> None:
        try:
            self._sock.close()
        except OSError:
            pass
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


class HashStore(Store):
    """An in-process store (PyTorch's HashStore), for world size 1 and tests."""

    def __init__(self, timeout: float = 300.0) -> None:
        self._t = _Table()
        self.timeout = timeout

    def set(self, key: str, value: Union[str, bytes]) -> None:
        with self._t.cond:
            self._t.data[key.encode()] = _as_bytes(value)
            self._t.cond.notify_all()

    def get(self, key: str) -> bytes:
        k = key.encode()
        with self._t.cond:
            if not self._t.cond.wait_for(lambda: k in self._t.data, self.timeout):
                raise DistStoreError(f"HashStore.get: timed out waiting for key {key!r}")
            return self._t.data[k]

    def add(self, key: str, amount: int) -> int:
        with self._t.cond:
            v = int(self._t.data.get(key.encode(), b"0")) + int(amount)
            self._t.data[key.encode()] = str(v).encode()
            self._t.cond.notify_all()
            return v

    def check(self, keys: List[str]) -> bool:
        with self._t.cond:
            return all(k.encode() in self._t.data for k in keys)

    def delete_key(self, key: str) -> bool:
        with self._t.cond:
            return self._t.data.pop(key.encode(), None) is not None

    def num_keys(self) -> int:
        return len(self._t.data)


def _parse_records(raw: bytes) -> Dict[bytes, bytes]:
    """FileStore's log: records (op byte, key length, value length, key, value); op 0 sets,
    1 deletes. A torn last record (a writer mid-append) is ignored."""
    data: Dict[bytes, bytes] = {}
    i = 0
    while i + 17 <= len(raw):
        op = raw[i]
        kl, vl = _struct.unpack(">QQ", raw[i + 1:i + 17])
        if i + 17 + kl + vl > len(raw):
            break
        k = raw[i + 17:i + 17 + kl]
        if op == 0:
            data[k] = raw[i + 17 + kl:i + 17 + kl + vl]
        else:
            data.pop(k, None)
        i += 17 + kl + vl
    return data


class FileStore(Store):
    """PyTorch's FileStore: every rank opens the same file (on a shared file system for
    several hosts); records are appended under an ``fcntl`` lock and read back whole."""

    def __init__(self, file_name: str, world_size: int = -1,
                 timeout: float = 300.0) -> None:
        self.path, self.timeout = file_name, timeout
        open(self.path, "ab").close()

    def _read(self) -> Dict[bytes, bytes]:
        with open(self.path, "rb") as f:
            _fcntl.flock(f, _fcntl.LOCK_SH)
            raw = f.read()
            _fcntl.flock(f, _fcntl.LOCK_UN)
        return _parse_records(raw)

    def _append(self, op: int, k: bytes, v: bytes) -> None:
        with open(self.path, "ab") as f:
            _fcntl.flock(f, _fcntl.LOCK_EX)
            f.write(bytes([op]) + _struct.pack(">QQ", len(k), len(v)) + k + v)
            f.flush()
            _fcntl.flock(f, _fcntl.LOCK_UN)

    def set(self, key: str, value: Union[str, bytes]) -> None:
        self._append(0, key.encode(), _as_bytes(value))

    def get(self, key: str) -> bytes:
        self.wait([key])
        return self._read()[key.encode()]

    def add(self, key: str, amount: int) -> int:
        with open(self.path, "r+b") as f:
            _fcntl.flock(f, _fcntl.LOCK_EX)
            try:
                f.seek(0)
                cur = int(_parse_records(f.read()).get(key.encode(), b"0")) + int(amount)
                k, v = key.encode(), str(cur).encode()
                f.seek(0, _os.SEEK_END)
                f.write(bytes([0]) + _struct.pack(">QQ", len(k), len(v)) + k + v)
                f.flush()
            finally:
                _fcntl.flock(f, _fcntl.LOCK_UN)
        return cur

    def check(self, keys: List[str]) -> bool:
        d = self._read()
        return all(k.encode() in d for k in keys)

    def delete_key(self, key: str) -> bool:
        present = key.encode() in self._read()
        self._append(1, key.encode(), b"")
        return present

    def num_keys(self) -> int:
        return len(self._read())


class PrefixStore(Store):
    """Puts every key of `store` under ``prefix/`` (PyTorch's PrefixStore)."""

    def __init__(self, prefix: str, store: Store) -> None:
        self.prefix, self.underlying_store = prefix, store
        self.timeout = store.timeout

    def _k(self, key: str) -> str:
        return f"{self.prefix}/{key}"

    def set(self, key: str, value: Union[str, bytes]) -> None:
        self.underlying_store.set(self._k(key), value)

    def get(self, key: str) -> bytes:
        return self.underlying_store.get(self._k(key))

    def add(self, key: str, amount: int) -> int:
        return self.underlying_store.add(self._k(key), amount)

    def check(self, keys: List[str]) -> bool:
        return self.underlying_store.check([self._k(k) for k in keys])

    def delete_key(self, key: str) -> bool:
        return self.underlying_store.delete_key(self._k(key))

    def num_keys(self) -> int:
        return self.underlying_store.num_keys()

    def wait(self, keys: List[str], timeout: Optional[_datetime.timedelta] = None) -> None:
        self.underlying_store.wait([self._k(k) for k in keys], timeout)
