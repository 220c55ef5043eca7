"""DistributedDataParallel on 2 ranks against one process training on the whole batch."""


def test_ddp_matches_single_process_training(run_mpi):
    run_mpi("ddp_equivalence")


def test_ddp_find_unused_parameters(run_mpi):
    run_mpi("ddp_unused")
