"""Tests of bench/docs_page.py, which turns `gemmkit bench --markdown` reports into a docs performance page:
the CPU, peaks, peers and command come first, the tables follow with headings MyST accepts under -W."""
import importlib.util
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("gemmkit_bench_docs_page", os.path.join(HERE, "docs_page.py"))
docs_page = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(docs_page)

REPORT = """## gemmkit benchmark: threads=1, pinned to CPU 0, layout NN

- command: `python bench/run_bench.py --threads 1 --only sgemm`
- date: 2026-11-25T12:34:45, load average at start 0.10 0.20 0.30
- CPU: AMD EPYC (family 25 model 17, 2 CPUs, L2 2 MiB, L3 32 MiB); affinity 0
- gemmkit 0.1.0 (git abc1234): path `avx512_vnni`, sgemm `ukernel_sgemm_avx512_12x32`, threads 1
- NumPy 2.4.6, SciPy 1.17.1; thread pools: NumPy: openblas 0.3.31 (1 thread)
- MKL: not installed (pip install mkl)
- peaks per core: fp32 117.0 GFLOP/s (fp32 zmm FMA)
- timing: warm-up, then libraries interleaved round-robin

#### sgemm (float32) (NN), GFLOP/s (median), threads=1

| case | gemmkit | NumPy matmul | gk/NumPy matmul | gk % peak |
|:---|---:|---:|---:|---:|
| 64×64×64 | 80.3 | 88.8 | 0.90 | 69% |
"""


def test_page_names_the_cpu_peaks_peers_and_command_then_the_tables():
    page = docs_page.make_page([REPORT], "AMD EPYC (Zen 4)", plot_name="zen4.png")
    assert page.startswith("# AMD EPYC (Zen 4)\n")
    head = page[:page.index("## How to reproduce")]
    assert "- **CPU**: AMD EPYC (family 25 model 17" in head
    assert "- **peaks per core**: fp32 117.0 GFLOP/s" in head
    assert "- **NumPy / SciPy**: NumPy 2.4.6, SciPy 1.17.1" in head and "- **MKL**: not installed" in head
    assert "python bench/run_bench.py --threads 1 --only sgemm\n```" in page
    assert "![median rate against size per library](zen4.png)" in page
    assert "| 64×64×64 | 80.3 | 88.8 | 0.90 | 69% |" in page


def test_headings_never_skip_a_level():
    """MyST warns on a jump (## then ####), which fails sphinx-build -W."""
    page = docs_page.make_page([REPORT, REPORT.replace("threads=1", "threads=2")], "x")
    levels = [len(m.group(1)) for m in re.finditer(r"^(#+) ", page, re.M)]
    assert levels[0] == 1 and levels.count(1) == 1
    assert all(b <= a + 1 for a, b in zip(levels, levels[1:])), levels


def test_main_writes_the_page_and_copies_the_plot(tmp_path):
    report, plot = tmp_path / "r.md", tmp_path / "r.png"
    report.write_text(REPORT, encoding="utf-8")
    plot.write_bytes(b"\x89PNG\r\n\x1a\n")
    out = tmp_path / "out"
    assert docs_page.main([str(report), "--plot", str(plot), "--name", "zen4", "--title", "T",
                           "--outdir", str(out)]) == 0
    assert (out / "zen4.png").read_bytes() == plot.read_bytes()
    assert (out / "zen4.md").read_text(encoding="utf-8").startswith("# T\n")
