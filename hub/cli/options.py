"""Options shared by the commands that build an env (``rollout``, ``info``).

Example:
    >>> parse_kwargs(["from_pixels=True", "g=9.81", "name=CartPole-v1"])
    {'from_pixels': True, 'g': 9.81, 'name': 'CartPole-v1'}
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def parse_value(text: str) -> Any:
    """A Python literal when ``text`` is one (``3``, ``0.5``, ``True``, ``[1, 2]``), else ``text``.

    Example:
        >>> parse_value("None"), parse_value("(84, 84)"), parse_value("rgb_array")
        (None, (84, 84), 'rgb_array')
    """
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text


def parse_kwargs(items: Iterable[str]) -> dict[str, Any]:
    """Parse repeated ``key=value`` options into keyword arguments for ``make_env``.

    Raises:
        click.BadParameter: an item has no ``=`` or its key is not a Python identifier.

    Example:
        >>> parse_kwargs(["frame_skip=4", "frame_skip=2"])  # the last one wins
        {'frame_skip': 2}
    """
    kwargs: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise click.BadParameter(
                f"{item!r} is not of the form key=value (e.g. --kwarg from_pixels=True).",
                param_hint="'--kwarg'",
            )
        kwargs[key] = parse_value(value.strip())
    return kwargs


def env_options(func: F) -> F:
    """Add ``--num-envs``, ``--batching``, ``--seed`` and ``--kwarg`` to a command.

    Example:
        >>> @click.command()
        ... @env_options
        ... def show(num_envs, batching, seed, kwargs): ...
        >>> sorted(p.name for p in show.params)
        ['batching', 'kwargs', 'num_envs', 'seed']
    """
    options = [
        click.option(
            "--kwarg",
            "-k",
            "kwargs",
            multiple=True,
            metavar="KEY=VALUE",
            help="Keyword argument for the env, repeatable; values are Python literals "
            "when they parse as one, else strings (e.g. -k from_pixels=True).",
        ),
        click.option("--seed", type=int, default=None, help="Seed for the env and for torch."),
        click.option(
            "--batching",
            "-b",
            default=None,
            metavar="STRATEGY",
            help="auto, serial, parallel, native or a plugin's strategy (default: auto).",
        ),
        click.option(
            "--num-envs",
            "-n",
            type=click.IntRange(min=1),
            default=None,
            help="Number of envs run as one batch (default: one env, no batch dimension).",
        ),
    ]
    for option in options:
        func = option(func)
    return func


def make_env_kwargs(
    num_envs: int | None, batching: str | None, seed: int | None, kwargs: Iterable[str]
) -> dict[str, Any]:
    """The keyword arguments given to ``hub.make_env`` for the shared options.

    Only the options that were given are passed, so the registry's defaults apply otherwise.

    Example:
        >>> make_env_kwargs(4, None, 0, ["g=9.81"])
        {'g': 9.81, 'num_envs': 4, 'seed': 0}
    """
    out = parse_kwargs(kwargs)
    if num_envs is not None:
        out["num_envs"] = num_envs
    if batching is not None:
        out["batching"] = batching
    if seed is not None:
        out["seed"] = seed
    return out
