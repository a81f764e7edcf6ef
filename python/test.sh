#!/usr/bin/env bash
# Tests of the krecords Python package: a virtual environment (python/.venv, reused), the
# package installed into it from this clone with `pip install ./python` (as the README says),
# then the extension's clippy, mypy --strict on the package and pytest on python/tests.
# Needs python3 (3.9+) with venv, the Rust toolchain and network access to PyPI for the first run.
#
# Usage: bash python/test.sh            (from anywhere; scripts/test.sh runs it)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/pip install -q --upgrade pip
.venv/bin/pip install -q "maturin>=1.5,<2" "pyarrow>=15" pytest mypy

# The extension's own workspace: formatted, no clippy warnings (the root workspace excludes it).
cargo fmt --check
CARGO_TARGET_DIR=../target cargo clippy --locked --all-targets -- -D warnings

# The install the README gives, in the repository's target directory (the dependencies the
# workspace built are reused). `krec` for the reference outputs comes from the same target.
CARGO_TARGET_DIR=../target .venv/bin/pip install -q --force-reinstall --no-deps .
[ -x ../target/debug/krec ] || [ -x ../target/release/krec ] || (cd .. && cargo build -q --locked -p krec)
(cd /tmp && "$OLDPWD/.venv/bin/python" -c "import krecords; print('krecords', krecords.__version__)")
.venv/bin/mypy --strict --ignore-missing-imports krecords tests/typed_usage.py
# `pytest`, not `python -m pytest`: the latter puts this folder first on sys.path, where the
# package source (without the built extension) would shadow the installed package.
.venv/bin/pytest -q tests
