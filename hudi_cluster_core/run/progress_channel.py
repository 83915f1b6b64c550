"""Progress from inside running Spark tasks: a small TCP listener on the driver, and what a task sends it.

Spark merges a task's accumulator updates only when the task ends, so a group that takes minutes would show 0%
until it is done. A running task instead sends ``<token> <unit> <bytes done>`` lines, at most one every
``SEND_EVERY_S`` seconds, over one connection to the driver from a thread of the task (executors reach the driver's host on every master:
Spark's own RPC needs it). The channel is best effort: a task that cannot connect stops trying and the bar
moves when the task ends, as before. A task's bytes done weigh reading and writing alike: half the unit's input
bytes as its group's slices are read, half as the rows read are written.
"""

from __future__ import annotations

import logging
import secrets
import selectors
import socket
import threading
from dataclasses import dataclass, field

log = logging.getLogger(__name__)
SEND_EVERY_S = 0.5
CONNECT_TIMEOUT_S = 2.0
RUNNING_AT_MOST = 0.99  # a running task is never done: 100% is for the tasks Spark saw end


class ProgressListener:
    """The driver's end: bytes done per unit (the highest value heard, so a retried task never moves it back)."""

    def __init__(self, bind_host: str, host: str):
        self.token = secrets.token_hex(8)
        self.server = socket.create_server((bind_host, 0))
        self.server.setblocking(False)
        self.address = (host, self.server.getsockname()[1])  # as executors reach it
        self.done: dict[int, int] = {}
        self._lock = threading.Lock()
        self._selector = selectors.DefaultSelector()
        self._selector.register(self.server, selectors.EVENT_READ)
        # close() wakes the thread through this pair at once, not at its next select timeout (0.2 s of every run)
        self._wake, self._waker = socket.socketpair()
        self._selector.register(self._wake, selectors.EVENT_READ)
        self._buffers: dict[socket.socket, bytes] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="progress-listener", daemon=True)
        self._thread.start()

    def bytes_done(self, finished: frozenset[int] = frozenset()) -> int:
        """Bytes done by units still running (those in ``finished`` are counted whole by the caller)."""
        with self._lock:
            return sum(done for unit, done in self.done.items() if unit not in finished)

    def _serve(self) -> None:
        while not self._stop.is_set():
            for key, _ in self._selector.select(timeout=0.2):
                if key.fileobj is self._wake:
                    return
                if key.fileobj is self.server:
                    self._accept()
                else:
                    self._read(key.fileobj)  # type: ignore[arg-type]

    def _accept(self) -> None:
        try:
            connection, _ = self.server.accept()
        except OSError:
            return
        connection.setblocking(False)
        self._buffers[connection] = b""
        self._selector.register(connection, selectors.EVENT_READ)

    def _read(self, connection: socket.socket) -> None:
        try:
            data = connection.recv(4096)
        except OSError:
            data = b""
        if not data:
            self._drop(connection)
            return
        lines = (self._buffers[connection] + data).split(b"\n")
        self._buffers[connection] = lines.pop()[-256:]  # an incomplete line waits for its end
        for line in lines:
            self._take(line)

    def _take(self, line: bytes) -> None:
        parts = line.split()
        if len(parts) != 3 or parts[0].decode("ascii", "replace") != self.token:
            return  # not one of our tasks
        try:
            unit, done = int(parts[1]), int(parts[2])
        except ValueError:
            return
        with self._lock:
            self.done[unit] = max(done, self.done.get(unit, 0))

    def _drop(self, connection: socket.socket) -> None:
        self._selector.unregister(connection)
        self._buffers.pop(connection, None)
        connection.close()

    def close(self) -> None:
        self._stop.set()
        self._waker.send(b"x")
        self._thread.join(timeout=2)
        for connection in list(self._buffers):
            self._drop(connection)
        self._selector.close()
        self.server.close()
        self._wake.close()
        self._waker.close()


@dataclass
class UnitReporter:
    """A task's end, made on the executor: counts what the task reads and writes and sends its bytes done.

    ``unit_bytes``: the unit's share of its group's input bytes; ``units``: how many tasks share the group (each
    reads all of its slices and writes about its share of the rows)."""

    address: tuple[str, int] | None  # the driver's listener (None: nobody listens)
    token: str
    unit: int
    unit_bytes: int
    slices: int
    units: int = 1
    rows_read: int = 0
    rows_written: int = 0
    _slices_read: float = 0.0
    _slice_rows: dict = field(default_factory=dict)
    _socket: socket.socket | None = None
    _sender: threading.Thread | None = None
    _stop: threading.Event = field(default_factory=threading.Event)

    def read(self, slice_key: object, rows: int, part_of_slice: float, *, restart: bool = False) -> None:
        """``rows`` more rows of a slice read, ``part_of_slice`` more of it done (a fraction of 1).
        ``restart``: the slice is read again from its start (its rows count once)."""
        if restart:
            self.rows_read -= self._slice_rows.pop(slice_key, 0)
        self._slice_rows[slice_key] = self._slice_rows.get(slice_key, 0) + rows
        self.rows_read += rows
        self._slices_read = min(float(self.slices), self._slices_read + part_of_slice)
        self._maybe_send()

    def written(self, rows: int) -> None:
        self.rows_written += rows
        self._maybe_send()

    def bytes_done(self) -> int:
        read = self._slices_read / self.slices if self.slices else 1.0
        share = self.rows_read / max(1, self.units)
        wrote = read * min(1.0, self.rows_written / share) if share else 0.0
        return int(self.unit_bytes * min(RUNNING_AT_MOST, 0.5 * read + 0.5 * wrote))

    def _maybe_send(self) -> None:
        """Starts the sender on the first event: a thread that sends the latest bytes done every ``SEND_EVERY_S``
        seconds while they change (so a pause after the last event still shows where the task is)."""
        if self._sender is None and self.address is not None:
            self._sender = threading.Thread(target=self._send_loop, name="progress-sender", daemon=True)
            self._sender.start()

    def _send_loop(self) -> None:
        sent = -1
        while True:
            done = self.bytes_done()
            if done != sent:
                if not self._send(done):
                    return
                sent = done
            if self._stop.wait(SEND_EVERY_S):
                return

    def _send(self, done: int) -> bool:
        try:
            if self._socket is None:
                self._socket = socket.create_connection(self.address, timeout=CONNECT_TIMEOUT_S)  # type: ignore[arg-type]  # not None: checked by _maybe_send
            self._socket.sendall(f"{self.token} {self.unit} {done}\n".encode("ascii"))
            return True
        except OSError as exc:  # the driver is not reachable from here: progress moves when the task ends
            log.debug("progress channel: %s", exc)
            return False

    def close(self) -> None:
        self._stop.set()
        if self._sender is not None:
            self._sender.join(timeout=CONNECT_TIMEOUT_S + 1)
        if self._socket is not None:
            try:
                self._socket.close()
            except OSError:
                pass
            self._socket = None
