"""``python -m wormhole.cli``: the same as the ``wormhole`` console script."""
from .cli import wormhole

if __name__ == "__main__":
    wormhole(prog_name="wormhole")
