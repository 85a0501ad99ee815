"""A griffe extension for the API reference: hub's docstrings title their doctests
``Example:``, which the Google docstring parser does not know as a section; read it as
``Examples:`` so that the ``>>>`` lines render as code blocks.

Loaded by mkdocs.yml (``extensions: [docs/_ext/griffe_examples.py]``).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_TITLE = re.compile(r"^(\s*)Example:[ \t]*$", re.MULTILINE)


class ExampleSections(griffe.Extension):
    """Rename each ``Example:`` section title to ``Examples:`` before the docstring is parsed."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        docstring = obj.docstring
        if docstring is not None and "Example:" in docstring.value:
            docstring.value = _TITLE.sub(r"\1Examples:", docstring.value)
