"""Ctrl-C during long calls, and one `Scan` shared by threads.

Each interrupt test runs a Python process whose call blocks for ever without it (a read of a
pipe nobody writes, a broker that accepts connections and never answers), sends it SIGINT once
it is inside the call, and expects `KeyboardInterrupt`. Before the calls handled Python's
signals while waiting, such a process never ended (the test's timeout failed it).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import List

import pyarrow as pa
import pytest

import krecords

# Long enough for a loaded CI machine; the calls under test would otherwise never end.
DEADLINE = 120.0


def interrupted(script: str, *, sigints: int = 1, stdin_pipe: bool = False) -> subprocess.CompletedProcess:
    """Runs `script` (which prints `ready` just before its blocking call), sends it `sigints`
    SIGINTs once it is in the call, and returns how it ended."""
    # Not in this folder: `python -c` puts the working directory first on sys.path, where the
    # package source (without the built extension) would shadow the installed package.
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        cwd="/",
        stdin=subprocess.PIPE if stdin_pipe else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.strip() == "ready", (line, proc.stderr.read() if proc.stderr else "")
        # The call starts right after `ready`: give it a moment to be inside.
        time.sleep(1.0)
        for _ in range(sigints):
            proc.send_signal(signal.SIGINT)
            time.sleep(0.5)
        out, err = proc.communicate(timeout=DEADLINE)
        return subprocess.CompletedProcess(proc.args, proc.returncode, line + out, err)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def assert_keyboard_interrupt(done: subprocess.CompletedProcess) -> None:
    assert done.returncode != 0, done
    assert "KeyboardInterrupt" in done.stderr, done.stderr
    assert "finished" not in done.stdout, done.stdout


def test_ctrl_c_interrupts_a_read_of_a_source_that_gives_nothing() -> None:
    # Standard input is a pipe the parent holds open and never writes: the open never ends.
    script = (
        "import krecords\n"
        "print('ready', flush=True)\n"
        "krecords.read_table('-', isolation='read_uncommitted')\n"
        "print('finished', flush=True)\n"
    )
    assert_keyboard_interrupt(interrupted(script, stdin_pipe=True))


def test_ctrl_c_interrupts_verify_of_a_file_that_never_ends(tmp_path: Path) -> None:
    fifo = tmp_path / "00000000000000000000.log"
    os.mkfifo(fifo)
    # The parent opens the FIFO for writing (and never writes), so the child's read blocks.
    holder = os.open(fifo, os.O_RDWR)
    try:
        script = (
            "import krecords\n"
            "print('ready', flush=True)\n"
            f"krecords.verify({str(fifo)!r})\n"
            "print('finished', flush=True)\n"
        )
        assert_keyboard_interrupt(interrupted(script))
    finally:
        os.close(holder)


def silent_broker() -> socket.socket:
    """A TCP server that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: List[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            held.append(conn)

    threading.Thread(target=accept, daemon=True).start()
    return server


def test_ctrl_c_stops_ship_and_a_second_one_raises_at_once(demo_partition: Path) -> None:
    server = silent_broker()
    try:
        port = server.getsockname()[1]
        # Timeouts far beyond the test's deadline: only the interrupt ends the call.
        script = (
            "import krecords\n"
            "print('ready', flush=True)\n"
            f"krecords.ship({str(demo_partition)!r}, 'kafka://127.0.0.1:{port}/t', job='j',\n"
            "    config={'socket.connection.setup.timeout.ms': '3600000',\n"
            "            'request.timeout.ms': '3600000'})\n"
            "print('finished', flush=True)\n"
        )
        # The first Ctrl-C asks the job to stop gracefully (it is still waiting for the
        # broker); the second raises without waiting.
        assert_keyboard_interrupt(interrupted(script, sigints=2))
    finally:
        server.close()


def test_threads_share_one_scan(demo_partition: Path) -> None:
    want = krecords.read_table(demo_partition, max_rows=7)
    scan = krecords.scan(demo_partition, max_rows=7)
    got: List[pa.RecordBatch] = []
    errors: List[BaseException] = []
    lock = threading.Lock()

    def work() -> None:
        try:
            for b in scan:
                batch = pa.record_batch(b)
                with lock:
                    got.append(batch)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    table = pa.Table.from_batches(got, schema=want.schema).sort_by("offset")
    assert table.num_rows == want.num_rows > 7
    assert table.equals(want.sort_by("offset"))


@pytest.mark.parametrize("consume", ["stream", "iterate"])
def test_a_scan_is_consumed_once(demo_partition: Path, consume: str) -> None:
    scan = krecords.scan(demo_partition)
    if consume == "stream":
        first = pa.RecordBatchReader.from_stream(scan).read_all()
    else:
        first = pa.Table.from_batches([pa.record_batch(b) for b in scan])
    assert first.num_rows > 0
    assert list(scan) == []
    if consume == "stream":
        with pytest.raises(krecords.UsageError, match="already consumed"):
            pa.RecordBatchReader.from_stream(scan)


def test_values_read_as_null_are_counted_and_warned_of(tmp_path: Path) -> None:
    records = [{"timestamp": 1714000000000, "value": v} for v in (b"ok", b"\xff", b"fine", b"\xc3(")]
    f = tmp_path / "00000000000000000000.log"
    f.write_bytes(krecords.build_batch(records))
    with pytest.warns(UserWarning, match="not UTF-8 were read as null: 2 of column value"):
        t = krecords.read_table(f, value_format="string", columns=["value"])
    assert t.column("value").to_pylist() == ["ok", None, "fine", None]
    scan = krecords.scan(f, value_format="string")
    assert scan.invalid == {}
    with pytest.warns(UserWarning, match="2 of column value"):
        assert sum(pa.record_batch(b).num_rows for b in scan) == 4
    assert scan.invalid == {"value": 2}
    # Handed to an Arrow consumer through the C stream interface, the counts are there once
    # it has read the stream (no warning can reach Python from the consumer's thread).
    scan = krecords.scan(f, value_format="string")
    assert pa.table(scan).num_rows == 4
    assert scan.invalid == {"value": 2}
    # Binary values keep the bytes: nothing to count, nothing said.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = krecords.read_table(f, columns=["value"])
    assert t.column("value").to_pylist() == [b"ok", b"\xff", b"fine", b"\xc3("]
