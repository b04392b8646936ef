"""``python -m pyguard``: the ``pyguard`` command line (:func:`pyguard.cli.main`), for when the script is not on PATH."""

from __future__ import annotations

from pyguard.cli import main

__all__: list[str] = []

if __name__ == "__main__":
    main()
