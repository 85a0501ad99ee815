"""``python -m hub``: the ``hub`` command line.

Example:
    $ python -m hub plugins --json
"""

from __future__ import annotations

from hub.cli import main

if __name__ == "__main__":
    main()
