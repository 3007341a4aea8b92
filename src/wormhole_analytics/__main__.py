"""``python -m wormhole_analytics``: the command line in ``_cli``.

Guarded so that tools which import every module (the state-machine diagram
generator walks all of ``wormhole``) do not run the command.
"""
import sys

from ._cli import main

if __name__ == "__main__":
    sys.exit(main())
