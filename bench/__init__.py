"""gemmkit's benchmark, a package by role: cli (command line), machine (CPU, load, peaks), peers (the other
libraries and their thread pools), timing, cases/ (one module per op), report (tables) and plot.

Entry points: `python bench/run_bench.py ...` and the `gemmkit bench ...` command run inside a checkout.
bench/run_bench.py loads this folder as the package `gemmkit_bench` without putting the checkout on
sys.path, so `import gemmkit` keeps finding the installed, compiled package.
"""
