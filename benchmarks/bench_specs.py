"""Cost of the spec operations a step path may call, beside the tensor operation they wrap.

The spec is an Atari-sized frame, shape ``3 x 457 x 120``, in the forms a plugin builds:
``Bounded`` with per-element float bounds (a gymnasium ``Box`` with array bounds), ``Bounded``
with one uint8 range (pixels), ``Unbounded`` and ``Categorical``. For each operation the
reference is the tensor operation doing the same work (``t[0]`` for ``spec[0]``, ``torch.rand``
for ``rand``, a clamp-and-compare for ``is_in``). Each figure is the median, over ``--repeat``
rounds, of the mean time of ``--number`` calls; torch runs on one thread.

Run: ``python benchmarks/bench_specs.py [--repeat 15] [--number 200]``. Prints a table and
writes ``benchmarks/results/specs.json``.

Example:
    >>> from bench_specs import measure
    >>> rows = measure(repeat=1, number=2)
    >>> rows[0]["case"]
    'Bounded, per-element float bounds'
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from hub.specs import Bounded, Categorical, Composite, TensorSpec, Unbounded

RESULTS = Path(__file__).resolve().parent / "results" / "specs.json"
SHAPE = (3, 457, 120)


def frame_specs() -> dict[str, TensorSpec]:
    """The specs measured, by the name of their row."""
    gen = torch.Generator().manual_seed(0)
    low = -torch.rand(SHAPE, generator=gen)
    high = torch.rand(SHAPE, generator=gen) + 0.5
    return {
        "Bounded, per-element float bounds": Bounded(low, high),
        "Bounded, uint8 0-255": Bounded(0, 255, shape=SHAPE, dtype=torch.uint8),
        "Unbounded float": Unbounded(SHAPE),
        "Categorical(5)": Categorical(5, shape=SHAPE),
        "Composite(shape=[3]) of the float Bounded": Composite(
            pixels=Bounded(low, high), shape=SHAPE[:1]
        ),
    }


def _calls(spec: TensorSpec) -> dict[str, tuple[Callable[[], object], Callable[[], object]]]:
    """Operation -> (the spec call, the tensor operation doing the same work)."""
    value = spec.rand()
    if isinstance(spec, Composite):
        leaf = spec["pixels"]
        tensor = value["pixels"]
        return {
            "spec[0]": (lambda: spec[0], lambda: tensor[0]),
            "rand": (spec.rand, _rand_reference(leaf)),
            "is_in": (
                lambda: spec.is_in(value),
                lambda: torch.equal(tensor.clamp(leaf.low, leaf.high), tensor),
            ),
        }
    array = value.numpy()
    return {
        "spec[0]": (lambda: spec[0], lambda: value[0]),
        "spec[1:]": (lambda: spec[1:], lambda: value[1:]),
        "expand(8, ...)": (lambda: spec.expand(8, *SHAPE), lambda: value.expand(8, *SHAPE)),
        "rand": (spec.rand, _rand_reference(spec)),
        "is_in": (lambda: spec.is_in(value), _is_in_reference(spec, value)),
        "zero": (spec.zero, lambda: torch.zeros(SHAPE, dtype=value.dtype)),
        "encode(numpy)": (lambda: spec.encode(array), lambda: torch.from_numpy(array.copy())),
    }


def _rand_reference(spec: TensorSpec) -> Callable[[], object]:
    """A plain torch draw of the spec's shape and dtype."""
    if spec.dtype.is_floating_point:
        return lambda: torch.rand(SHAPE, dtype=spec.dtype)
    return lambda: torch.randint(0, 5, SHAPE, dtype=spec.dtype)


def _is_in_reference(spec: TensorSpec, value: torch.Tensor) -> Callable[[], object]:
    """The tensor check doing the spec's work: bounds per element, a range, or dtype and shape."""
    if isinstance(spec, Bounded) and spec.dtype.is_floating_point:
        low, high = spec.low, spec.high
        return lambda: torch.equal(value.clamp(low, high), value)
    if isinstance(spec, Bounded | Categorical):
        return lambda: [v.item() for v in torch.aminmax(value)]
    return lambda: value.dtype == spec.dtype and value.shape == spec.shape


def _median_us(fn: Callable[[], object], repeat: int, number: int) -> float:
    rounds = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        rounds.append((time.perf_counter() - start) / number * 1e6)
    return statistics.median(rounds)


def measure(repeat: int = 15, number: int = 200) -> list[dict]:
    """One row per (spec, operation): the spec call's and the tensor operation's microseconds."""
    torch.set_num_threads(1)
    rows = []
    for case, spec in frame_specs().items():
        for op, (spec_call, tensor_call) in _calls(spec).items():
            spec_call(), tensor_call()  # warm up
            spec_us = _median_us(spec_call, repeat, number)
            tensor_us = _median_us(tensor_call, repeat, number)
            rows.append(
                {
                    "case": case,
                    "op": op,
                    "spec_us": round(spec_us, 2),
                    "tensor_us": round(tensor_us, 2),
                    "ratio": round(spec_us / tensor_us, 2) if tensor_us else None,
                }
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--number", type=int, default=200)
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args()
    rows = measure(args.repeat, args.number)
    print("| spec | op | spec µs | tensor µs | ratio |")
    print("|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row['case']} | {row['op']} | {row['spec_us']} | {row['tensor_us']} | "
            f"{row['ratio']} |"
        )
    meta = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "numpy": np.__version__,
        "shape": list(SHAPE),
        "repeat": args.repeat,
        "number": args.number,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    Path(args.out).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
