"""The Markdown form of a benchmark report (the JSON form is the report itself)."""
from __future__ import annotations

from . import frameworks as fws

__all__ = ["markdown", "fmt_time"]


def fmt_time(seconds) -> str:
    """A duration with a unit that keeps three significant digits readable."""
    if seconds is None:
        return "-"
    if seconds >= 1:
        return f"{seconds:.3g} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} µs"


def _ratio(r) -> str:
    return "-" if r is None else f"{r:.2f}"


def _cell(res) -> str:
    if res is None:
        return "skipped"
    cell = f"{fmt_time(res['per_unit_s'])} ({_ratio(res.get('ratio'))}"
    cell += f"; CPU {_ratio(res['cpu_ratio'])})" if res.get("cpu_ratio") is not None else ")"
    if res.get("check", "ok") not in ("ok", "no reference"):
        cell += " **check: " + res["check"] + "**"
    return cell


def markdown(report) -> str:
    m = report["machine"]
    fw = [f for f in report["frameworks"]]
    lines = []
    title = "retrograd benchmarks" + (" (quick smoke-test sizes; timings not meaningful)" if report["quick"] else "")
    lines += [f"### {title}", ""]
    versions = ", ".join(f"{k} {v}" for k, v in m["versions"].items() if v)
    lines += [f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB, {m['os']}, Python {m['python']}; "
              f"{versions}. Run {report['date']}: `{report['command']}`; load average at start "
              f"{m.get('load_average')}, at end {report.get('load_average_end')}.", "",
              f"Threads: {report['thread_policy']}. NumPy BLAS (retrograd, HIPS autograd, MyGrad, NumPy floor): "
              f"{report['blas_pinning']}.", "",
              "Each cell: median time per unit, and in parentheses its ratio to PyTorch (1 thread) from the "
              "same run (lower is faster), by wall time and by the process's CPU time (CPU: what the "
              "framework's threads used, without the waits of a shared machine). Every result was checked against the NumPy floor's (PyTorch (1 thread)'s "
              "where a workload has no floor).", ""]
    lines.append("| workload | unit | " + " | ".join(fws.LABELS[f] for f in fw) + " |")
    lines.append("|---|---|" + "---|" * len(fw))
    notes = []
    for key, e in report["workloads"].items():
        if key == "deep":
            res = {f: r for f, r in e["results"].items()}
            cells = []
            for f in fw:
                r = res.get(f)
                cells.append("skipped" if r is None else
                             f"{fmt_time(r['median_s'])} ({_ratio(r.get('ratio'))})")
            lines.append(f"| {e['title']} | run (fwd + bwd + teardown) | " + " | ".join(cells) + " |")
        else:
            lines.append(f"| {e['title']} | {e['unit']} | " + " | ".join(_cell(e["results"].get(f)) for f in fw)
                         + " |")
        for f, why in e["notes"].items():
            notes.append(f"- {e['title']}, {fws.LABELS[f]}: {why}")
    lines.append("")
    deep = report["workloads"].get("deep")
    if deep and deep["results"]:
        lines += [f"W5 deep in detail ({deep['params']['steps']:,} nodes, fresh process per sample, medians; "
                  "graph memory = peak RSS growth while building and differentiating; ratios to PyTorch "
                  "(1 thread)):", "",
                  "| framework | forward | backward | backward per node | teardown | graph memory | peak RSS |",
                  "|---|---|---|---|---|---|---|"]
        for f in fw:
            r = deep["results"].get(f)
            if r is None:
                continue
            lines.append(f"| {fws.LABELS[f]} | {fmt_time(r['forward_s'])} | {fmt_time(r['backward_s'])} | "
                         f"{r['backward_per_node_us']:.2f} µs ({_ratio(r.get('backward_ratio'))}) | "
                         f"{fmt_time(r['teardown_s'])} | {r['graph_rss_mib']:.0f} MiB "
                         f"({_ratio(r.get('graph_rss_ratio'))}) | {r['peak_rss_mib']:.0f} MiB |")
        lines.append("")
    off = report["workloads"].get("profiling_off")
    if off and off.get("variants"):
        rounds = len(next(iter(off["variants"]["never"].values()))["samples_s"])
        lines += [f"Profiling off in detail ({rounds} rounds, each variant a forked process, samples in turn): each "
                  "step's time after the mode was entered and left once, over its time in the process that never "
                  "entered it, median over the rounds [min, max]:", "",
                  "| variant | " + " | ".join(off["variants"]["never"]) + " |",
                  "|---|" + "---|" * len(off["variants"]["never"])]
        for v, row in off["variants"].items():
            cells = [f"{fmt_time(r['median_s'])}" if v == "never" else
                     f"{r['ratio_median']:.3f} [{r['ratio_min']:.3f}, {r['ratio_max']:.3f}]" for r in row.values()]
            lines.append(f"| {v} | " + " | ".join(cells) + " |")
        lines.append("")
    if notes:
        lines += ["Skipped:", ""] + notes + [""]
    if report.get("targets"):
        lines += ["Targets (retrograd / PyTorch 1 thread):", "",
                  "| workload | measure | target | now | now by CPU time | off by |", "|---|---|---|---|---|---|"]
        for t in report["targets"]:
            if t["ratio"] is None:
                lines.append(f"| {t['title']} | {t['what']} | {t['target']:.2f} | - | - | {t['note']} |")
            else:
                off = t["off_by"]
                status = "met" if off <= 1 else f"{off:.2f}x too slow" if t["key"] != "deep_rss" else \
                    f"{off:.2f}x too much"
                lines.append(f"| {t['title']} | {t['what']} | {t['target']:.2f} | {t['ratio']:.2f} | "
                             f"{_ratio(t.get('cpu_ratio'))} | {status} |")
        lines.append("")
    lines.append("Workloads:")
    lines.append("")
    for e in report["workloads"].values():
        params = ", ".join(f"{k}={v}" for k, v in e["params"].items())
        lines.append(f"- {e['title']} ({params}): {e['description']}.")
    lines.append("")
    return "\n".join(lines)
