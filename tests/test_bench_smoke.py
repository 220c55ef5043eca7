"""The benchmark suite runs end to end at its quick sizes (retrograd and the NumPy floor only).

No timing is asserted; what is asserted is that every workload runs on both, that retrograd's
result agrees with the hand-written NumPy floor, and that the JSON and Markdown tables are written.
"""
import json

import pytest

from bench import run as bench_run
from bench.workloads import GROUPS


@pytest.fixture(scope="module")
def report():
    return bench_run.run(quick=True, frameworks=["retrograd", "numpy"], log=lambda *a: None)


def test_every_workload_runs_on_the_numpy_floor(report):
    assert set(report["workloads"]) == {"chain", "mlp", "fanin", "hvp", "deep", "many_small", "convnet"}
    for key, entry in report["workloads"].items():
        res = entry["results"]["numpy"]
        assert res["median_s"] > 0, key


def test_retrograd_agrees_with_the_numpy_floor(report):
    for key, entry in report["workloads"].items():
        if key == "convnet" and "retrograd" in entry["notes"]:
            assert "conv2d" in entry["notes"]["retrograd"]  # skipped only for want of conv2d
            continue
        assert entry["results"]["retrograd"]["check"] == "ok", key


def test_ratios_are_absent_without_the_pytorch_reference(report):
    for entry in report["workloads"].values():
        for res in entry["results"].values():
            assert res["ratio"] is None


def test_each_sample_is_timed_by_wall_and_cpu_time(report):
    for key, entry in report["workloads"].items():
        if key == "deep":
            continue
        for fw, res in entry["results"].items():
            assert len(res["cpu_samples_s"]) == len(res["samples_s"]) == 1, (key, fw)
            assert res["cpu_median_s"] >= 0 and res["cpu_ratio"] is None, (key, fw)


def test_the_rounds_give_each_framework_two_neighbours():
    # A rotation alone keeps the cyclic order: retrograd would always run right after the same
    # framework, and whatever that one leaves behind would land on retrograd's samples alone.
    fws = ["retrograd", "torch1", "torch", "numpy", "jaxjit"]
    before = {fw: set() for fw in fws}
    order = [fw for r in range(4) for fw in bench_run._rotate(fws, r)]
    for prev, fw in zip(order, order[1:]):
        before[fw].add(prev)
    assert all(sorted(bench_run._rotate(fws, r)) == sorted(fws) for r in range(6))
    assert all(len(prevs - {fw}) >= 2 for fw, prevs in before.items()), before


def test_writes_json_and_markdown(report, tmp_path):
    json_path, md_path = bench_run.write(report, str(tmp_path))
    assert json_path.endswith("bench-quick.json") and md_path.endswith("bench-quick.md")
    with open(json_path) as f:
        assert json.load(f)["workloads"]["chain"]["params"] == {"steps": 200}
    with open(md_path) as f:
        text = f.read()
    assert "| W1 chain | run |" in text and "NumPy floor" in text


def test_unknown_framework_is_refused():
    with pytest.raises(ValueError, match="unknown framework"):
        bench_run.run(quick=True, frameworks=["theano"], only=["chain"], log=lambda *a: None)


@pytest.fixture(scope="module")
def models_report():
    return bench_run.run(quick=True, frameworks=["retrograd", "numpy"], only=["models"], log=lambda *a: None)


def test_models_group_runs_w14_to_w25_in_order(models_report):
    titles = [e["title"] for e in models_report["workloads"].values()]
    assert list(models_report["workloads"]) == list(GROUPS["models"])
    assert [t.split()[0] for t in titles] == [f"W{n}" for n in range(14, 26)]


def test_model_workloads_agree_with_the_numpy_floor(models_report):
    without_floor = {"vae", "makemore"}  # checked against PyTorch (1 thread) in a full run
    for key, entry in models_report["workloads"].items():
        if key in without_floor:
            assert entry["notes"]["numpy"] == "not written for this framework", key
            assert entry["results"]["retrograd"]["check"] == "no reference", key
        else:
            assert entry["results"]["retrograd"]["check"] == "ok", key


def test_programs_group_is_the_three_programs():
    report = bench_run.run(quick=True, frameworks=["numpy"], only=["programs", "polyfit"], log=lambda *a: None)
    assert list(report["workloads"]) == ["polyfit", "vae", "makemore"]


@pytest.fixture(scope="module")
def profiling_off_report():
    return bench_run.run(quick=True, frameworks=["retrograd", "numpy"], only=["profiling_off"], log=lambda *a: None)


def test_profiling_off_times_each_variant_against_the_process_that_never_profiled(profiling_off_report):
    report = profiling_off_report
    entry = report["workloads"]["profiling_off"]
    assert list(entry["variants"]) == ["never", "profile", "explain_mode", "detect_nonfinite"]
    for variant, row in entry["variants"].items():
        assert list(row) == ["chain", "mlp", "many_small"]
        for r in row.values():
            assert len(r["samples_s"]) == 1 and r["ratio_min"] <= r["ratio_median"] <= r["ratio_max"]
            if variant == "never":
                assert r["ratio_median"] == 1.0
    assert entry["notes"] == {"numpy": "measures retrograd alone (its modes off against never on)"}
    assert "| profile | " in bench_run.markdown(report)


def test_without_hooks_finds_every_check_of_profiling_off(tmp_path):
    # Each edit must find its text as often as it says: a check that moved would otherwise be
    # measured as still there (bench/without_hooks.py, docs/perf/profiling-off.md).
    from bench import without_hooks
    without_hooks.strip(str(tmp_path))
    for rel, old, new, _ in without_hooks.EDITS:
        text = (tmp_path / rel).read_text()
        assert old not in text, rel
        assert new in text, rel
