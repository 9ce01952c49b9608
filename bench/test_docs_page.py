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


def test_notes_come_after_the_tables_without_their_file_comment():
    notes = "<!-- role of the notes file,\n     two lines -->\n## Notes on this CPU\n\n- tiny limit 32³\n"
    page = docs_page.make_page([REPORT], "T", notes=notes)
    assert "role of the notes file" not in page
    assert page.index("## How to reproduce") < page.index("| 64×64×64 |") < page.index("## Notes on this CPU")


def test_a_report_whose_top_headings_are_level_3_keeps_its_nesting():
    report = REPORT.replace("## gemmkit", "### 1 thread\n\n- command: `x`\n\n#### gemmkit").replace(
        "#### sgemm", "##### sgemm")
    page = docs_page.make_page([report, report.replace("##### sgemm", "##### int8")], "T")
    levels = {m.group(2): len(m.group(1)) for m in re.finditer(r"^(#+) (\w+)", page, re.M)}
    assert levels["1"] == 2 and levels["gemmkit"] == 3 and levels["sgemm"] == levels["int8"] == 4


def test_older_peak_header_is_the_pages_peaks():
    page = docs_page.make_page([REPORT.replace("- peaks per core: ", "- single-core peak: ")], "T")
    assert "- **peaks per core**: fp32 117.0 GFLOP/s" in page


def _model_module():
    spec = importlib.util.spec_from_file_location("gemmkit_bench_model", os.path.join(HERE, "model.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class _FakeMca:
    def busiest(self):
        return "FP0", 12.0, [("vfmadd231ps", 24)]


class _FakeLoop:
    body = ["vfmadd231ps"] * 10
    compute = {("fma", 512): 24}
    function = "k"


def _row(model, cpu, op, cycles):
    return {"cpu": cpu, "config": "avx512_vnni/zen4", "op": op, "kernel": "ukernel_x", "note": "",
            "loop": _FakeLoop(), "steps": 1, "cycles": cycles, "bound": 24.0, "compute_alone": 24.0,
            "mca": _FakeMca()}


def test_model_page_explains_only_the_rows_under_the_bound():
    """The kernel model page (python -m bench.model --page): a note shows while one of its rows is under
    90 % of the bound, and goes once the kernel or llvm's model is fixed."""
    model = _model_module()
    low = [_row(model, "znver4", "int8", 60.0), _row(model, "znver4", "sgemm", 24.0)]
    page = model.page(low, "19.1.7", "python -m bench.model --page docs/performance/kernel_model.md")
    assert page.startswith("# Kernel throughput model (llvm-mca)\n")
    assert "python -m bench.model --page docs/performance/kernel_model.md\n" in page
    assert "**znver4 int8: llvm's model.**" in page and "**znver4 FMA kernels" not in page
    assert "| 40 % ✗ |" in page and "| 100 % |" in page
    assert "## Bounds" in page and "AMD SOG family 19h (Zen 4)" in page
    fixed = model.page([_row(model, "znver4", "int8", 24.0)], "19.1.7", "cmd")
    assert "The rows under" not in fixed
