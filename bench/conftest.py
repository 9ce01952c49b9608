"""pytest set-up for bench/test_bench.py: test the installed gemmkit, not the checkout's source folder.
pytest puts the checkout first on sys.path (bench/ is a package), where gemmkit/ has no compiled extension."""
import os
import sys

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _ROOT]
