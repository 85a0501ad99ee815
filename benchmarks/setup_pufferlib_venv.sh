#!/usr/bin/env bash
# Build the venv of bench_scale.py's PufferLib row: PufferLib 1.0.1, the newest that builds here
# (2.x and 3.0 download sources while building). It pins numpy 1.23.3 and gymnasium 0.29.1, so
# it cannot share the peer venv; psutil and filelock are imported but not declared by it.
# Usage: benchmarks/setup_pufferlib_venv.sh [VENV_DIR]   (default: .puffer-venv)
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${1:-.puffer-venv}
python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    pufferlib==1.0.1 numpy==1.23.3 envpool==1.2.5 psutil filelock
"$VENV/bin/python" -c "import pufferlib.vector, numpy, gymnasium; print('pufferlib', pufferlib.__version__, 'numpy', numpy.__version__, 'gymnasium', gymnasium.__version__)"
