"""``python -m wormhole``: the ``wormhole`` command, as in the reference."""

from .cli.cli import wormhole

if __name__ == "__main__":
    wormhole(prog_name="wormhole")
