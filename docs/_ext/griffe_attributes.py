"""A griffe extension for the API reference: the attributes that ``__init__`` sets are shown
without the code that computes them (``checks = checks``, ``frame_skip = int(frame_skip)``):
that code says nothing to a reader. An attribute set from the argument of the same name, with
no docstring of its own, gets that argument's description from the class docstring's ``Args:``.
Constants (``masks_partial_resets = True``) and class attributes keep their values.

Loaded by mkdocs.yml (``extensions: [docs/_ext/griffe_attributes.py]``).
"""

from __future__ import annotations

import ast
from typing import Any

import griffe


def _arguments(cls: griffe.Class) -> dict[str, str]:
    """The descriptions of the class docstring's ``Args:`` (and ``Keyword Args:``) entries."""
    if cls.docstring is None:
        return {}
    described: dict[str, str] = {}
    for section in cls.docstring.parse("google", warnings=False):
        if section.kind in (
            griffe.DocstringSectionKind.parameters,
            griffe.DocstringSectionKind.other_parameters,
        ):
            for parameter in section.value:
                described.setdefault(parameter.name, parameter.description)
    return described


def _parameters(cls: griffe.Class) -> set[str]:
    init = cls.members.get("__init__")
    if not isinstance(init, griffe.Function):
        return set()
    return {parameter.name for parameter in init.parameters}


def _is_literal(value: Any) -> bool:
    try:
        ast.literal_eval(str(value))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


def computed_by_init(member: griffe.Attribute) -> bool:
    """Whether ``member`` is an instance attribute only, set to an expression (not a literal)."""
    labels = member.labels
    return (
        "instance-attribute" in labels
        and "class-attribute" not in labels
        and member.value is not None
        and not _is_literal(member.value)
    )


class ArgumentAttributes(griffe.Extension):
    """Drop the computed values of instance attributes; give those named after an argument,
    without a docstring, the argument's description."""

    def on_class_members(self, *, cls: griffe.Class, **kwargs: Any) -> None:
        parameters = _parameters(cls)
        described: dict[str, str] | None = None
        for name, member in cls.members.items():
            if not isinstance(member, griffe.Attribute) or not computed_by_init(member):
                continue
            member.value = None
            if member.docstring is None and name in parameters:
                if described is None:
                    described = _arguments(cls)
                if described.get(name):
                    member.docstring = griffe.Docstring(described[name], parent=member)
