"""The whole subclass contract of hub's env classes, in one list (rendered in docs/plugins.md,
checked by the conformance kit and by hub's architecture tests).

Example:
    >>> names = [hook.name for hook in subclass_contract()]
    >>> "_step_arrays" in names and "_make_specs" in names and "_run_step" not in names
    True
"""

from __future__ import annotations

from hub.envs.contract import EnvHooks, Hook, attribute_hooks, contract_hooks
from hub.envs.gym_like import GymLikeEnv
from hub.envs.wrapper import WRAPPER_ATTRIBUTES, EnvWrapper

__all__ = ["subclass_contract", "contract_names", "markdown_table"]


def subclass_contract() -> list[Hook]:
    """Every hook of ``EnvBase``, ``EnvWrapper`` and ``GymLikeEnv`` a backend may write (or,
    for attributes, read), in the order a reader meets them."""
    return [
        *contract_hooks(EnvHooks),
        *attribute_hooks(),
        *contract_hooks(EnvWrapper),
        *WRAPPER_ATTRIBUTES,
        *contract_hooks(GymLikeEnv),
    ]


def contract_names() -> set[str]:
    """The underscore names of the contract: the only ones of hub's env classes that a
    backend's class may define or use."""
    return {hook.name for hook in subclass_contract() if hook.name.startswith("_")}


def markdown_table() -> str:
    """The contract as the markdown table of docs/plugins.md.

    Example:
        >>> markdown_table().splitlines()[0]
        '| hook | class | must write | called | may assume / must do |'
    """
    lines = [
        "| hook | class | must write | called | may assume / must do |",
        "|---|---|---|---|---|",
    ]
    for h in subclass_contract():
        lines.append(f"| `{h.name}` | `{h.owner}` | {h.required} | {h.called} | {h.contract} |")
    return "\n".join(lines)


if __name__ == "__main__":  # python -m hub.envs.hook_table: the table of docs/plugins.md
    print(markdown_table())
