"""Shared fixtures: the repository, the `krec` binary (the Rust CLI, the reference) and a sample
partition directory made by `krec demo`."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from pathlib import Path
from typing import Iterator, List

import pytest

REPO = Path(__file__).resolve().parents[2]


def krec_binary() -> str:
    """`$KREC`, else the repository's built krec (release or debug), else `krec` on PATH."""
    env = os.environ.get("KREC")
    if env:
        return env
    for profile in ("release", "debug"):
        p = REPO / "target" / profile / "krec"
        if p.exists():
            return str(p)
    found = shutil.which("krec")
    if found:
        return found
    pytest.skip("no krec binary: build it (cargo build -p krec) or set KREC")
    raise AssertionError("unreachable")


@pytest.fixture(scope="session")
def krec() -> str:
    return krec_binary()


@pytest.fixture(scope="session")
def demo_partition(krec: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A mixed-format partition directory (v0/v1/v2, codecs, a committed and an aborted
    transaction) made by `krec demo --keep`."""
    root = tmp_path_factory.mktemp("demo")
    subprocess.run([krec, "demo", "--keep", "--dir", str(root)], check=True, capture_output=True)
    parts = [Path(p).parent for p in glob.glob(str(root / "**" / "*.log"), recursive=True)]
    assert parts, "krec demo made no segment"
    return parts[0]


def segments(part: Path) -> List[Path]:
    return sorted(part.glob("*.log"))


@pytest.fixture()
def demo_segments(demo_partition: Path) -> Iterator[List[Path]]:
    yield segments(demo_partition)
