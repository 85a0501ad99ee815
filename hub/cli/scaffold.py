"""Write a ready plugin distribution from :mod:`hub.cli.scaffold_templates`.

Example:
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     root = write_plugin("demo", tmp)
    ...     sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py"))
    ['src/hub_plugin_demo/__init__.py', 'src/hub_plugin_demo/envs.py', 'src/hub_plugin_demo/plugin.py', 'tests/test_hub_plugin_demo.py']
"""

from __future__ import annotations

import re
from pathlib import Path
from string import Template

from hub.cli.scaffold_templates import TEMPLATES

__all__ = ["plugin_fields", "write_plugin", "NAME_PATTERN"]

NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]*$")


def plugin_fields(name: str) -> dict[str, str]:
    """The template fields for the plugin ``name``.

    Example:
        >>> plugin_fields("my_sim")["dist"], plugin_fields("my_sim")["class_name"]
        ('hub-plugin-my-sim', 'MySimEnv')
    """
    if not NAME_PATTERN.match(name):
        raise ValueError(
            f"plugin name {name!r} must be lowercase letters, digits and '_', starting with a "
            f"letter (it becomes the namespace, the entry point and part of the package name)"
        )
    words = name.split("_")
    return {
        "name": name,
        "dist": "hub-plugin-" + name.replace("_", "-"),
        "package": f"hub_plugin_{name}",
        "class_name": "".join(w.capitalize() for w in words if w) + "Env",
        "env_id": "Walk-v0",
    }


def write_plugin(name: str, directory: str | Path = ".", *, force: bool = False) -> Path:
    """Write the distribution ``hub-plugin-<name>`` under ``directory``; returns its root.

    Raises:
        FileExistsError: the root exists and ``force`` is false.
    """
    fields = plugin_fields(name)
    root = Path(directory) / fields["dist"]
    if root.exists() and not force:
        raise FileExistsError(
            f"{root} exists already; choose another directory (--directory) or pass --force "
            f"to overwrite its files"
        )
    for relative, text in TEMPLATES.items():
        path = root / Template(relative).substitute(fields)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(Template(text).substitute(fields))
    return root
