"""``hub bench``: the table runs end to end (a smoke test: no assertion on speed)."""

from __future__ import annotations

import json

import pytest

from hub.cli.bench import RLLIB_2018, _plan, default_rows, run_bench, strategy_rows, summarize
from hub.cli.bench_loops import BUILTIN_ROWS, build_loop

from .conftest import json_of


def test_quick_table_with_every_builtin_row_and_a_plot(invoke, tmp_path) -> None:
    plot = tmp_path / "bench.svg"
    rows = ",".join(BUILTIN_ROWS)
    report = json_of(invoke("bench", "--quick", "--rows", rows, "--json", "--plot", str(plot)))
    assert report["config"]["widths"] == [1, 8]
    assert report["config"]["one_process"] is True  # one start-up, not one per cell
    assert report["reference"]["actions_per_s"] == {str(k): v for k, v in RLLIB_2018.items()}
    cells = {(c["row"], c["width"]): c for c in report["cells"]}
    assert set(cells) == {(row, w) for row in BUILTIN_ROWS for w in (1, 8)}
    for cell in cells.values():
        assert cell["errors"] == [] and cell["median"] > 0, cell
    assert plot.read_text().startswith("<?xml")


def test_the_table_names_each_row_and_the_published_figures(invoke, monkeypatch) -> None:
    """The command line and the table; the cells' processes are the quick test's."""
    from hub.cli import bench as bench_module

    def cells(rows, env, widths, **kwargs):
        return [
            {"row": r, "env": env, "width": w, "actions_per_s": 1000.0 * w}
            for r in rows
            for w in widths
        ]

    monkeypatch.setattr(bench_module, "_run_cells", cells)
    result = invoke(
        "bench", "--rows", "hub-serial", "--widths", "2", "--runs", "1", "--seconds", "0.05"
    )
    assert result.exit_code == 0, result.output
    text = result.output
    assert "RLlib 2018 (published)" in text and "hub SerialEnv of gymnasium envs" in text
    assert "W=2" in text and "2,000" in text


def test_a_failing_cell_is_reported_not_raised() -> None:
    report = run_bench(
        rows=["hub-serial"], widths=[1], envs=["NoSuchEnv-v0"], runs=1, seconds=0.01, warmup=0
    )
    (cell,) = report["cells"]
    assert cell["median"] is None and "NoSuchEnv-v0" in cell["errors"][0]


@pytest.mark.parametrize("row", ["hub-gymnasium", "hub-envpool"])
def test_hub_rows_step_with_one_hot_actions(row: str) -> None:
    step, close = build_loop(row, "CartPole-v1", 3)
    try:
        for _ in range(20):
            step()
    finally:
        close()


def test_summary_takes_median_and_range() -> None:
    runs = [{"row": "r", "env": "e", "width": 1, "actions_per_s": v} for v in (3.0, 1.0, 2.0)]
    (cell,) = summarize([*runs, {"row": "r", "env": "e", "width": 1, "error": "boom"}])
    assert (cell["median"], cell["min"], cell["max"], cell["errors"]) == (2.0, 1.0, 3.0, ["boom"])
    assert json.dumps(cell)


def test_a_plugins_batching_strategy_runs_only_when_named(manager_with_strategy) -> None:
    """The Ray row used to run by default (and start Ray) wherever Ray was installed."""
    assert "hub-batching-toy" in strategy_rows()
    assert not any(row.startswith("hub-batching-") for row in default_rows())


def test_quick_plans_one_process_per_env_and_the_full_bench_one_per_cell() -> None:
    quick = _plan(["a", "b"], ["E1", "E2"], [1, 8], runs=1, one_process=True)
    assert quick == [(0, ("a", "b"), "E1", (1, 8)), (0, ("a", "b"), "E2", (1, 8))]
    full = _plan(["a", "b"], ["E1"], [1, 8], runs=2)
    assert len(full) == 8 and all(len(rows) == len(widths) == 1 for _, rows, _, widths in full)


@pytest.fixture
def manager_with_strategy():
    from hub.plugins import BatchingStrategy, get_plugin_manager, hookimpl

    class Plugin:
        @hookimpl
        def hub_batching(self):
            return [BatchingStrategy("toy", make=lambda fn, n, **kw: None)]

    manager = get_plugin_manager()
    manager.register(Plugin(), name="toy-strategy")
    yield manager
    manager.unregister("toy-strategy")


def test_parallel_layout_rows_run_on_all_cores_and_name_their_layout(invoke) -> None:
    rows = "gymnasium,hub-parallel-w2,hub-parallel-e1"
    result = invoke(
        "bench", "--all-cores", "--rows", rows, "--widths", "2", "--runs", "1", "--seconds", "0.05"
    )
    assert result.exit_code == 0, result.output
    text = result.output
    assert "actions/s on all cores" in text
    assert "hub ParallelEnv, num_workers=2" in text and "envs_per_worker=1" in text
    assert "x)" in text  # each layout row's ratio to raw gymnasium


def test_an_unknown_row_names_the_layout_rows() -> None:
    with pytest.raises(ValueError, match="hub-parallel-wN, hub-parallel-eK"):
        build_loop("hub-parallel-q3", "CartPole-v1", 2)
