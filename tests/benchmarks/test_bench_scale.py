"""``benchmarks/bench_scale.py``'s machinery, run for a moment (no assertion on speed)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def bench_scale():
    spec = importlib.util.spec_from_file_location("bench_scale", BENCHMARKS / "bench_scale.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_scale"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("bench_scale", None)


@pytest.fixture(autouse=True)
def _torch_threads():
    """A case sets torch to one thread (the script runs each in a fresh process); this process
    gets its setting back, which later tests (stacks split across threads) depend on."""
    import torch

    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


@pytest.mark.parametrize("row", ["gym-sync", "minimal", "hub-serial", "hub-parallel-w2"])
def test_a_quick_case_runs_and_reports_its_figures(bench_scale, row: str) -> None:
    args = bench_scale.parse_args(["--quick", "--seconds", "0.05", "--warmup", "0"])
    # Earlier tests may leave children in this process (a forkserver); the script runs each
    # case in a fresh process, so only the case's own processes are compared here.
    before = bench_scale.tree_memory()["processes"]
    result = bench_scale.run_case(row, "cartpole", 4, args)
    assert result["env_steps_per_s"] > 0 and result["batch_steps"] >= 5, result
    assert result["start_s"] > 0 and result["peak_rss_mb"] > 0
    started = result["processes"] - before
    if row in ("gym-sync", "hub-serial"):
        assert started == 0
    else:
        assert started >= 2  # two workers (a forkserver may come with them)


def test_quick_mode_plans_five_rows_of_cartpole_at_64(bench_scale) -> None:
    args = bench_scale.parse_args(["--quick"])
    cases = bench_scale.plan(["cartpole"], [64], args.rows.split(","), True)
    assert [c[1:] for c in cases] == [("cartpole", 64)] * 5
    assert args.rounds == 1


def test_rows_that_cannot_run_a_case_are_skipped_with_the_reason(bench_scale) -> None:
    args = bench_scale.parse_args([])
    assert "W <= 8" in bench_scale.static_skip("hub-parallel-e1", "cartpole", 64, args)
    assert "--torchrl-python" in bench_scale.static_skip("torchrl", "cartpole", 8, args)
    assert bench_scale.static_skip("hub-parallel", "pong", 256, args) is None
    assert bench_scale.parallel_layout("hub-parallel-w4") == {"num_workers": 4}
    with pytest.raises(ValueError, match="unknown row"):
        bench_scale.parallel_layout("hub-parallel-x")


def test_summary_pairs_each_round_with_its_reference(bench_scale) -> None:
    def run(row: str, rnd: int, rate: float) -> dict:
        return {"row": row, "env": "cartpole", "width": 8, "round": rnd, "env_steps_per_s": rate}

    runs = [run("gym-sync", 0, 100.0), run("gym-sync", 1, 200.0)]
    runs += [run("minimal", 0, 100.0), run("minimal", 1, 100.0)]
    runs += [run("hub-parallel", 0, 50.0), run("hub-parallel", 1, 150.0)]
    runs.append({"row": "sb3", "env": "cartpole", "width": 8, "round": 0, "skipped": "why"})
    summary = {e["row"]: e for e in bench_scale.summarize(runs)}
    parallel = summary["hub-parallel"]
    assert parallel["vs_sync"] == pytest.approx(0.625)  # median of 0.5 and 0.75
    assert parallel["vs_minimal_range"] == [0.5, 1.5]
    assert summary["sb3"]["skipped"] == "why"
    table = bench_scale.markdown({"summary": list(summary.values())})
    assert "| hub-parallel | 100 |" in table and "skipped: why" in table
