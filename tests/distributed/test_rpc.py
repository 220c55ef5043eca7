"""RPC and distributed autograd on 2 workers."""


def test_rpc_calls_remote_rref_and_errors(run_mpi):
    run_mpi("rpc_basic")


def test_dist_autograd_split_model_errors_and_concurrent_contexts(run_mpi):
    run_mpi("dist_autograd_split")
