"""Collectives and their errors, on 2 ranks."""
import pathlib

import pytest


def test_collectives_blocking_and_async(run_mpi):
    run_mpi("collectives")


def test_collective_before_init_raises(run_mpi):
    run_mpi("before_init", n=1)


def test_mismatched_shapes_raise_on_every_rank(run_mpi):
    run_mpi("mismatch")


def test_dead_rank_fails_the_others_within_the_timeout(run_mpi):
    proc = run_mpi("dead_rank", expect_ok=False)
    assert "PASS dead_rank rank 0" in proc.stdout, proc.stdout + proc.stderr


def test_launcher_runs_n_ranks(run_mpi):
    run_mpi("collectives", launcher=True)


@pytest.mark.parametrize("scenario", ["dies_in_all_reduce", "dies_in_ddp_backward"])
def test_a_rank_that_dies_is_named_by_the_survivor_and_by_the_launcher(run_mpi, scenario):
    proc = run_mpi(scenario, expect_ok=False, launcher=True, timeout=120)
    assert f"PASS {scenario} rank 0" in proc.stdout, proc.stdout + proc.stderr
    assert "retrograd.distributed.run: rank 1 failed first: exit code 1" in proc.stderr, proc.stderr
    assert proc.returncode == 1


def test_the_readme_says_what_happens_when_a_rank_dies():
    readme = pathlib.Path(__file__).parents[2] / "README.md"
    text = " ".join(readme.read_text(encoding="utf-8").split())
    assert ("When a rank dies, every other rank's pending collective fails with `RuntimeError` naming it "
            "(`all_reduce failed on rank 0: rank 1 (exit code 1) ended before the collective completed`) within "
            "about a second, never later than the group's timeout; the launcher then prints which rank failed "
            "first and how (`rank 1 failed first: exit code 1`) and exits with that rank's status.") in text
