"""Cost of one call of a version-dispatched function: hub, pyvers, and a plain call, same run.

Run: ``python benchmarks/bench_dispatch.py [--repeat 31] [--number 200000]``. Prints a table
and writes ``benchmarks/results/dispatch.json``. Each figure is the median over ``--repeat``
rounds of ``--number`` calls of a trivial function (``x -> x``); the candidates are measured in
turn within each round, so drift affects them alike.

Example:
    >>> from bench_dispatch import measure
    >>> rows = measure(repeat=3, number=1000)
    >>> [row["name"] for row in rows][:2]
    ['plain function', 'hub implement_for']
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
import timeit
from importlib.metadata import version
from pathlib import Path

from pyvers import implement_for as pyvers_implement_for

from hub.dispatch import implement_for

RESULTS = Path(__file__).resolve().parent / "results" / "dispatch.json"


def plain(x):
    return x


@implement_for("numpy", None, "1.0")
def hub_fn(x):
    return -x


@hub_fn.register(from_version="1.0")
def _(x):
    return x


@pyvers_implement_for("numpy", None, "1.0")
def pyvers_fn(x):
    return -x


@pyvers_implement_for("numpy", "1.0")
def pyvers_fn(x):  # noqa: F811 - pyvers' style: one definition per range
    return x


# pyvers rebinds the module attribute to the chosen raw function on the first call; the object
# its decorator returned (what an importer or a class holds) keeps dispatching on every call.
pyvers_decorated = pyvers_fn


class Holder:
    def plain_method(self, x):
        return x

    @implement_for("numpy", "1.0")
    def hub_method(self, x):
        return x


def candidates() -> list[tuple[str, str, object]]:
    """(name, note, callable) for each measured call; all return their argument."""
    assert hub_fn(1) == 1 and pyvers_decorated(1) == 1  # resolve once, outside the timing
    pyvers_module_attr = globals()["pyvers_fn"]  # rebound by pyvers to the raw function by now
    holder = Holder()
    return [
        ("plain function", "def f(x): return x", plain),
        ("hub implement_for", "the dispatcher object (two ranges)", hub_fn),
        ("pyvers implement_for", "the object its decorator returned", pyvers_decorated),
        (
            "pyvers, module attribute",
            "after the first call pyvers rebinds it to the raw function (global monkeypatch)",
            pyvers_module_attr,
        ),
        ("plain method", "obj.m(x)", holder.plain_method),
        ("hub method", "obj.m(x), m dispatched", holder.hub_method),
    ]


def measure(repeat: int = 31, number: int = 200_000) -> list[dict]:
    """Median and spread of the per-call time of each candidate, in nanoseconds.

    ``overhead_ns`` and ``ratio`` compare medians with the plain function (or plain method).
    """
    cands = candidates()
    holder = Holder()
    timers = []
    for name, _note, fn in cands:
        if name.endswith("method"):
            attr = "plain_method" if name.startswith("plain") else "hub_method"
            timers.append(timeit.Timer(f"h.{attr}(1)", globals={"h": holder}))
        else:
            timers.append(timeit.Timer("f(1)", globals={"f": fn}))
    samples: list[list[float]] = [[] for _ in cands]
    for _ in range(repeat):
        for i, timer in enumerate(timers):
            samples[i].append(timer.timeit(number) / number * 1e9)
    rows = []
    for (name, note, _fn), times in zip(cands, samples):
        rows.append(
            {
                "name": name,
                "note": note,
                "median_ns": statistics.median(times),
                "min_ns": min(times),
                "max_ns": max(times),
            }
        )
    base = {"function": rows[0]["median_ns"], "method": rows[4]["median_ns"]}
    for row in rows:
        ref = base["method"] if row["name"].endswith("method") else base["function"]
        row["overhead_ns"] = row["median_ns"] - ref
        row["ratio"] = row["median_ns"] / ref
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=31)
    parser.add_argument("--number", type=int, default=200_000)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    rows = measure(args.repeat, args.number)
    print(f"{'call':<26} {'median ns':>10} {'min ns':>8} {'overhead ns':>12} {'x plain':>8}")
    for row in rows:
        print(
            f"{row['name']:<26} {row['median_ns']:>10.1f} {row['min_ns']:>8.1f} "
            f"{row['overhead_ns']:>12.1f} {row['ratio']:>8.2f}"
        )
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    print(f"{os.cpu_count()} CPUs, load average {load}: a loaded machine inflates every figure")
    result = {
        "benchmark": "one call of a version-dispatched function",
        "method": f"timeit, median of {args.repeat} rounds of {args.number} calls, interleaved",
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "load_average_after": list(load) if load else None,
        "versions": {name: version(name) for name in ("hub", "pyvers", "numpy", "packaging")},
        "results": rows,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written to {args.output}")


if __name__ == "__main__":
    main()
