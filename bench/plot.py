"""The benchmark's picture: rate against size per library for each op, with the machine's peak as a line;
several runs (e.g. 1 and 2 threads, from --json files) overlay with one line style per run.

    python bench/plot.py run-1t.json run-2t.json -o bench/results.png
"""
import argparse
import json
import math

LIB_NAMES = {"gemmkit": "gemmkit", "gk_u8": "gemmkit u8s8", "gk_s8": "gemmkit s8s8", "numpy": "NumPy",
             "scipy": "SciPy", "mkl": "MKL", "onednn": "oneDNN", "dnnl_u8": "oneDNN u8s8", "dnnl_s8": "oneDNN s8s8"}
STYLES = ["-", "--", ":", "-."]
SKIP_OPS = {"arch", "latency"}   # one size each: tables, not curves


def series(run):
    """{op: {lib: [(case label, x, rate, wrong)]}} of one run's results, in the order the cases ran."""
    out = {}
    for r in run["results"]:
        if r["op"] in SKIP_OPS or r.get("rate") is None:
            continue
        out.setdefault(r["op"], {}).setdefault(r["lib"], []).append(
            (r["case"], r.get("x"), r["rate"], bool(r.get("mismatch"))))
    return out


def segments(pts):
    """Split points where the kind of case changes (squares have an x, other shapes not)."""
    out = []
    for p in pts:
        if out and (out[-1][-1][1] is None) == (p[1] is None):
            out[-1].append(p)
        else:
            out.append([p])
    return out


def plot_runs(runs, path):
    """Draw every op of `runs` (run dicts as --json writes them) into one PNG at `path`; returns the ops.
    One panel per op; colour: library, line style: run (thread count); black: the run's peak; an x marks a
    result that failed its check."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    per_run = [series(run) for run in runs]
    ops = list(dict.fromkeys(op for s in per_run for op in s))
    if not ops:
        raise ValueError("nothing to plot: no op with timed results")
    ncol = min(3, len(ops))
    nrow = math.ceil(len(ops) / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(5.2 * ncol, 3.6 * nrow + 0.9), squeeze=False)
    colors = {}
    for i, op in enumerate(ops):
        ax = axes[i // ncol][i % ncol]
        labels = list(dict.fromkeys(p[0] for s in per_run for pts in s.get(op, {}).values() for p in pts))
        for run, s, style in zip(runs, per_run, STYLES * len(runs)):
            for lib, pts in s.get(op, {}).items():
                color = colors.setdefault(lib, f"C{len(colors) % 10}")
                for seg in segments(pts):   # squares joined; other shapes a curve of their own
                    ax.plot([labels.index(p[0]) for p in seg], [p[2] for p in seg], style, color=color, lw=1.2)
                    for p in seg:
                        ax.plot(labels.index(p[0]), p[2], "x" if p[3] else "o", ms=5 if p[3] else 3, color=color)
            peak = run.get("ops", {}).get(op, {}).get("peak")
            if peak:
                ax.axhline(peak, color="black", ls=style, lw=0.8)
                ax.annotate(f"peak {peak:.0f} ({run.get('threads', '?')}t)", (0, peak), fontsize=6,
                            xytext=(0, 2), textcoords="offset points")
        unit = next((r["ops"][op].get("unit") for r in runs if op in r.get("ops", {})), "GFLOP/s")
        ax.set_title(op, fontsize=10)
        ax.set_ylabel(unit)
        ax.set_ylim(bottom=0)
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels([lb.replace(" × ", "×\n") for lb in labels], rotation=45, ha="right", fontsize=7)
        ax.grid(alpha=0.3)
    for j in range(len(ops), nrow * ncol):
        axes[j // ncol][j % ncol].axis("off")
    handles = [Line2D([], [], color=c, marker="o", ms=3, label=LIB_NAMES.get(lib, lib)) for lib, c in colors.items()]
    if len(runs) > 1:
        handles += [Line2D([], [], color="gray", ls=st, label=f"{r.get('threads', '?')} thread(s)")
                    for r, st in zip(runs, STYLES)]
    handles.append(Line2D([], [], color="gray", marker="x", ls="", label="result failed its check"))
    fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), 7), fontsize=8, frameon=False)
    first = runs[0]
    fig.suptitle(f"gemmkit benchmark (git {first.get('git', '?')}, {first.get('date', '')}): median rate per "
                 "case; black line: peak for the run's thread count", fontsize=10)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return ops


def main(argv=None):
    p = argparse.ArgumentParser(description="Draw bench/run_bench.py --json results (one or more runs).")
    p.add_argument("runs", nargs="+", help="JSON files written by run_bench.py --json")
    p.add_argument("-o", "--output", required=True, help="PNG to write")
    a = p.parse_args(argv)
    runs = []
    for f in a.runs:
        with open(f) as fh:
            data = json.load(fh)
        runs += data["runs"] if "runs" in data else [data]   # --threads 1,all writes {"runs": [...]}
    ops = plot_runs(runs, a.output)
    print(f"{a.output}: {', '.join(ops)}")


if __name__ == "__main__":
    main()
