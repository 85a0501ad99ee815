"""The gymnasium ecosystem, suite by suite (:data:`hub_gym.suites.SUITES`): each installed suite's
ids pass hub's conformance kit, except the checks :data:`NOT_YET` names with the reason.

The tox env ``suites`` installs the suites and runs this file with ``HUB_WRITE_SUITES=1``: the
last test then writes the "Suites" table of ``docs/compatibility.md`` from what the run found
(the installed versions, the checks that passed, the reasons of those that do not run), so the
table is never written by hand. Suites that are not installed are skipped.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
from pathlib import Path

import pytest
from hub_gym.suites import SUITES, Suite

from hub.testing import conformance_cases

DOC = Path(__file__).resolve().parents[3] / "docs" / "compatibility.md"
BEGIN, END = "<!-- suites:begin -->", "<!-- suites:end -->"

ALL_CHECKS = (
    "specs",
    "seeding",
    "serial",
    "parallel",
    "native",
    "partial_reset",
    "close",
    "pickle",
)

#: (suite, check) -> why that check does not pass there yet
NOT_YET = {
    **{
        ("Metaworld", check): "its observations leave its own observation space (the bounds "
        "check of check_env_specs fails at the first step)"
        for check in ("specs", "serial", "parallel", "native")
    },
    ("Metaworld", "seeding"): "Meta-World draws its task when the env is built, from a seed of "
    "its own (its make's seed=) that hub's set_seed does not reach",
}

RESULTS: dict[str, dict[str, object]] = {}


def _installed(suite: Suite) -> bool:
    return importlib.util.find_spec(suite.package) is not None


def _checks(suite: Suite) -> list[str]:
    return [check for check in ALL_CHECKS if (suite.name, check) not in NOT_YET]


@pytest.mark.timeout(3600)  # Craftax compiles for a minute in every process of the kit
@pytest.mark.parametrize("suite", SUITES, ids=[suite.name for suite in SUITES])
def test_suite_passes_the_kit(suite: Suite) -> None:
    if not _installed(suite):
        pytest.skip(f"{suite.name} is not installed ({suite.install}); tox -e suites runs it")
    if suite.namespace != "gymnasium" and os.environ.get("HUB_WRITE_SUITES") != "1":
        # hub[jax] is installed by make venv, but Craftax compiles for a minute in each process
        # of the kit: its row is checked by tox -e suites (and its env by the JAX plugin's tests)
        pytest.skip(f"{suite.name} is checked by tox -e suites")
    plugin = "gym" if suite.namespace == "gymnasium" else "jax"
    uris = [f"{suite.namespace}:{env_id}" for env_id in suite.checked]
    passed = []
    for case in conformance_cases(
        plugin, envs=uris, checks=_checks(suite), make_kwargs=dict(suite.make_kwargs)
    ):
        case.run()  # raises with the reason
        passed.append(case.check)
    RESULTS[suite.name] = {
        "version": importlib.metadata.version(suite.distribution),
        "passed": sorted(set(passed), key=ALL_CHECKS.index),
    }


def suites_table(results: dict[str, dict[str, object]]) -> str:
    """The markdown table of the suites a run checked (the others say how to install them)."""
    lines = [
        "| suite | needs | ids checked | version checked | checks passed | not yet, and why | notes |",
        "|---|---|---|---|---|---|---|",
    ]
    for suite in SUITES:
        result = results.get(suite.name)
        ids = ", ".join(f"`{suite.namespace}:{env_id}`" for env_id in suite.checked)
        needs = f"`{suite.install}`; ids registered by `import {suite.package}`"
        if suite.namespace != "gymnasium":
            needs = f"`{suite.install}`"
        if result is None:
            row = [suite.name, needs, ids, "not installed in the run", "-", "-", suite.notes]
        else:
            reasons: dict[str, list[str]] = {}  # checks that fail for one reason, together
            for check in ALL_CHECKS:
                if (suite.name, check) in NOT_YET:
                    reasons.setdefault(NOT_YET[(suite.name, check)], []).append(check)
            missing = [f"{', '.join(checks)}: {reason}" for reason, checks in reasons.items()]
            row = [
                suite.name,
                needs,
                ids,
                str(result["version"]),
                ", ".join(result["passed"]),
                "; ".join(missing) or "-",
                suite.notes,
            ]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def test_write_the_suites_table() -> None:
    """With ``HUB_WRITE_SUITES=1``: the table of this run goes into docs/compatibility.md."""
    text = DOC.read_text(encoding="utf-8")
    assert BEGIN in text and END in text, f"{DOC.name} lacks the {BEGIN} ... {END} markers"
    head, rest = text.split(BEGIN, 1)
    table, tail = rest.split(END, 1)
    if os.environ.get("HUB_WRITE_SUITES") != "1":
        # without the run's results: the table names every suite with what it needs and why
        # a check does not pass, as the code says
        written = {row.split(" | ")[0].strip("| "): row for row in table.strip().splitlines()[2:]}
        expected = suites_table({}).splitlines()[2:]
        assert sorted(written) == sorted(s.name for s in SUITES), "run tox -e suites"
        for row in expected:
            cells = row.split(" | ")
            assert written[cells[0].strip("| ")].split(" | ")[1:3] == cells[1:3], "tox -e suites"
        return
    if len(RESULTS) != len(SUITES):
        missing = sorted({s.name for s in SUITES} - set(RESULTS))
        pytest.fail(f"the table needs every suite checked in the run; not checked: {missing}")
    DOC.write_text(f"{head}{BEGIN}\n{suites_table(RESULTS)}\n{END}{tail}", encoding="utf-8")
