"""The gymnasium ecosystem hub serves through ``gymnasium:``, suite by suite.

Each :class:`Suite` names the package that registers its ids with gymnasium when imported, the
id prefixes it registers (so that hub imports the package when an id needs it, and before it
lists ids), the line that installs it beside hub, and the ids hub checks with its conformance
kit (``tests/plugins/hub_gym/test_hub_gym_suites.py``, tox env ``suites``); that test run writes
the "Suites" table of ``docs/compatibility.md``.

Example:
    >>> [suite.name for suite in SUITES][:2]
    ['MiniGrid', 'highway-env']
    >>> package_for("MiniGrid-Empty-5x5-v0")
    'minigrid'
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Suite", "SUITES", "ENV_PACKAGES", "package_for"]


@dataclass(frozen=True)
class Suite:
    """One env suite of the gymnasium ecosystem.

    Attributes:
        name: the suite's name.
        package: the import name that registers its ids (``import minigrid``).
        distribution: its name on PyPI.
        prefixes: the id prefixes it registers.
        install: the line that installs it beside hub.
        checked: the ids the conformance kit runs on.
        make_kwargs: keyword arguments for ``make_env`` in those checks.
        notes: what hub does or does not convert.
        namespace: the hub namespace that serves it (``gymnasium``, or another plugin's).
    """

    name: str
    package: str
    distribution: str
    prefixes: tuple[str, ...]
    install: str
    checked: tuple[str, ...]
    make_kwargs: tuple[tuple[str, object], ...] = ()
    notes: str = ""
    namespace: str = "gymnasium"


SUITES = (
    Suite(
        name="MiniGrid",
        package="minigrid",
        distribution="minigrid",
        prefixes=("MiniGrid-", "BabyAI-"),
        install='pip install "hub[gymnasium]" && pip install --no-deps minigrid',
        checked=("MiniGrid-Empty-5x5-v0", "BabyAI-GoToRedBall-v0"),
        notes="the mission string is a NonTensor entry (MissionSpace); --no-deps keeps pygame "
        "(minigrid asks for pygame-ce, which replaces it)",
    ),
    Suite(
        name="highway-env",
        package="highway_env",
        distribution="highway-env",
        prefixes=(
            "highway-",
            "merge-",
            "roundabout-",
            "parking-",
            "intersection-",
            "racetrack-",
            "exit-",
            "u-turn-",
            "lane-keeping-",
            "two-way-",
        ),
        install='pip install "hub[gymnasium]" pandas && pip install --no-deps highway-env',
        checked=("highway-fast-v0", "parking-v0"),
        notes="--no-deps keeps pygame (highway-env asks for pygame-ce)",
    ),
    Suite(
        name="MO-Gymnasium",
        package="mo_gymnasium",
        distribution="mo-gymnasium",
        prefixes=("mo-", "deep-sea-treasure", "resource-gathering", "fishwood", "breakable-"),
        install='pip install "hub[gymnasium]" mo-gymnasium',
        checked=("mo-mountaincar-v0", "deep-sea-treasure-v0"),
        notes="vector rewards: the reward spec has the reward space's shape",
    ),
    Suite(
        name="Metaworld",
        package="metaworld",
        distribution="metaworld",
        prefixes=("Meta-World/",),
        install='pip install "hub[gymnasium]" mujoco==3.3.0 && pip install --no-deps metaworld',
        checked=("Meta-World/MT1",),
        make_kwargs=(("env_name", "reach-v3"),),
        notes="needs mujoco 3.3.0 (with dm_control's 3.17.0 its models do not load), so not in "
        "one env with hub[dm-control]",
    ),
    Suite(
        name="Craftax-Classic",
        package="craftax",
        distribution="craftax",
        prefixes=(),
        install='pip install "hub[jax]"',
        checked=("Craftax-Classic-Symbolic-v1",),
        notes="Craftax registers no gymnasium ids: hub serves it natively (JAX, batched by "
        "jax.vmap) in the craftax: namespace",
        namespace="craftax",
    ),
)

#: id prefix -> the package that registers those ids when imported (ALE's ids included)
ENV_PACKAGES = {"ALE/": "ale_py"} | {
    prefix: suite.package for suite in SUITES for prefix in suite.prefixes
}


def package_for(env_id: str) -> str | None:
    """The package that registers ``env_id`` with gymnasium, if a known suite does.

    Example:
        >>> package_for("CartPole-v1") is None
        True
    """
    for prefix, package in ENV_PACKAGES.items():
        if env_id.startswith(prefix):
            return package
    return None
