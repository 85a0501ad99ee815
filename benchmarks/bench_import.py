"""Import time of hub against tensordict (and TorchRL's envs, when installed).

Each statement runs in a fresh interpreter, ``--repeats`` times, in an order that rotates; the
time inside the interpreter (``perf_counter`` around the statement) is reported as the median,
along with the wall time of the whole process.

Run:

    .venv/bin/python benchmarks/bench_import.py
    .bench-venv/bin/python benchmarks/bench_import.py   # adds `import torchrl.envs`

Writes ``benchmarks/results/import.json`` (or ``--out``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

STATEMENTS = {
    "import torch": "import torch",
    "import tensordict": "import tensordict",
    "import hub": "import hub",
    "import hub + the env core (hub.EnvBase)": "import hub; hub.EnvBase",
    "import hub + make_env('hub:Pendulum')": "import hub; hub.make_env('hub:Pendulum')",
    "import hub + list_plugins()": "import hub; hub.list_plugins()",
}
if importlib.util.find_spec("torchrl") is not None:
    STATEMENTS["import torchrl.envs"] = "import torchrl.envs"

SCRIPT = """
import time
_t = time.perf_counter()
{stmt}
print(time.perf_counter() - _t)
"""


def measure(stmt: str) -> tuple[float, float]:
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(stmt=stmt)], check=True, capture_output=True, text=True
    ).stdout
    wall = time.perf_counter() - start
    return float(out.strip().splitlines()[-1]), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "import.json"))
    args = parser.parse_args()
    names = list(STATEMENTS)
    inside: dict[str, list[float]] = {n: [] for n in names}
    wall: dict[str, list[float]] = {n: [] for n in names}
    for r in range(args.repeats):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            t_in, t_wall = measure(STATEMENTS[name])
            inside[name].append(t_in)
            wall[name].append(t_wall)
    base = statistics.median(inside["import tensordict"])
    rows = []
    print(f"{'statement':45s} {'inside (s)':>10s} {'wall (s)':>9s} {'/ tensordict':>13s}")
    for name in names:
        med = statistics.median(inside[name])
        row = {
            "statement": name,
            "inside_s": round(med, 3),
            "wall_s": round(statistics.median(wall[name]), 3),
            "ratio_to_import_tensordict": round(med / base, 2),
        }
        rows.append(row)
        print(
            f"{name:45s} {row['inside_s']:10.3f} {row['wall_s']:9.3f} {row['ratio_to_import_tensordict']:13.2f}"
        )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"repeats": args.repeats, "table": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
