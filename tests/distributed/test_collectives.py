"""Collectives and their errors, on 2 ranks."""


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
