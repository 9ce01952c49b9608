"""`python -m gemmkit`: the same as the `gemmkit` console command (the main job, `bench ...`, `info`),
see gemmkit/_cli.py."""
import sys

from gemmkit._cli import main

if __name__ == "__main__":
    sys.exit(main(prog="python -m gemmkit"))
