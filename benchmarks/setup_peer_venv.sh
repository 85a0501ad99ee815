#!/usr/bin/env bash
# Build the benchmark venv that holds hub next to its peers (TorchRL 0.14.1 needs tensordict<0.15).
# Usage: benchmarks/setup_peer_venv.sh [VENV_DIR]   (default: .bench-venv)
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${1:-.bench-venv}
python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r benchmarks/peer-requirements.txt
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -e .
"$VENV/bin/python" -c "import torch, torchrl, tensordict, hub; print('torch', torch.__version__, 'torchrl', torchrl.__version__, 'tensordict', tensordict.__version__)"
