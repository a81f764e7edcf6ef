#!/usr/bin/env bash
# Tests of the krecords Python package: a virtual environment (python/.venv, reused), the
# package installed into it from this clone with `pip install ./python` (as the README says),
# then the extension's clippy, mypy --strict on the package and pytest on python/tests.
# Needs python3 (3.9+) with venv, the Rust toolchain and network access to PyPI for the first run.
#
# Usage: bash python/test.sh              (from anywhere; scripts/test.sh runs it)
#        bash python/test.sh --venv-only  (only the virtual environment and its packages)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/pip install -q --upgrade pip
.venv/bin/pip install -q "maturin>=1.5,<2" "pyarrow>=15" pytest mypy
# `--venv-only`: stop here (scripts/test.sh downloads the packages in the background while the
# Rust steps compile).
if [ "${1:-}" = "--venv-only" ]; then
    exit 0
fi

# The extension's own workspace: formatted, no clippy warnings (the root workspace excludes it).
cargo fmt --check
CARGO_TARGET_DIR=../target cargo clippy --locked --all-targets -- -D warnings

# The install the README gives, in the repository's target directory. The extension is built
# with the dev profile (MATURIN_PEP517_ARGS), so the dependencies the workspace's tests compiled
# are reused: about 40 s on 2 cores, where the release build (thin LTO, every dependency
# optimized) took over 4 minutes of CI. A user's `pip install ./python` builds release; the
# tests pass on both (pytest: 11 s here, 10 s on release), and the dev build adds overflow checks.
CARGO_TARGET_DIR=../target MATURIN_PEP517_ARGS="--profile dev" \
    .venv/bin/pip install -q --force-reinstall --no-deps .
[ -x ../target/debug/krec ] || [ -x ../target/release/krec ] || (cd .. && cargo build -q --locked -p krec)
(cd /tmp && "$OLDPWD/.venv/bin/python" -c "import krecords; print('krecords', krecords.__version__)")
.venv/bin/mypy --strict --ignore-missing-imports krecords tests/typed_usage.py
# `pytest`, not `python -m pytest`: the latter puts this folder first on sys.path, where the
# package source (without the built extension) would shadow the installed package.
.venv/bin/pytest -q tests
