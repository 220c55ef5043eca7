"""Scenarios run on every rank under ``mpiexec``: ``python _mpi_worker.py <scenario>``.

Each scenario asserts what its rank sees and prints ``PASS <scenario> rank <r>``; the test
that started mpiexec checks the exit status and those lines.
"""
import os
import sys
import time

import numpy as np

import retrograd as rg
import retrograd.distributed as dist


def _raises(exc_type, fn, match):
    try:
        fn()
    except exc_type as exc:
        assert match in str(exc), f"{match!r} not in {exc!r}"
        return exc
    raise AssertionError(f"{fn} did not raise {exc_type.__name__}")


def collectives():
    dist.init_process_group("mpi")
    rank, size = dist.get_rank(), dist.get_world_size()
    assert dist.is_initialized() and size == 2 and dist.get_backend() == "mpi"
    t = rg.tensor([1.0, 2.0, 3.0], dtype=rg.float64) * (rank + 1)
    version = t._version
    dist.all_reduce(t)
    np.testing.assert_array_equal(t.numpy(), [3.0, 6.0, 9.0])
    assert t._version == version + 1
    for op, expected in [(dist.ReduceOp.AVG, [1.5, 3.0]), (dist.ReduceOp.MAX, [2.0, 4.0]),
                         (dist.ReduceOp.MIN, [1.0, 2.0]), (dist.ReduceOp.PRODUCT, [2.0, 8.0])]:
        t = rg.tensor([1.0, 2.0]) * (rank + 1)
        dist.all_reduce(t, op=op)
        np.testing.assert_allclose(t.numpy(), expected, err_msg=str(op))
    i = rg.tensor([rank, 10])
    dist.all_reduce(i)
    assert i.tolist() == [1, 20] and i.dtype == rg.int64
    # a non-contiguous tensor is reduced through a copy and written back into its own memory
    base = rg.arange(6, dtype=rg.float64).reshape(2, 3)
    view = base.t()
    dist.all_reduce(view)
    np.testing.assert_array_equal(base.numpy(), 2 * np.arange(6).reshape(2, 3))
    h = rg.tensor([0.5, 1.5], dtype=rg.float16)
    dist.all_reduce(h)
    assert h.dtype == rg.float16 and h.tolist() == [1.0, 3.0]

    b = rg.full((2, 2), float(rank))
    dist.broadcast(b, src=1)
    np.testing.assert_array_equal(b.numpy(), np.ones((2, 2)))
    _raises(ValueError, lambda: dist.broadcast(b, src=2), "src=2")

    out = [rg.zeros(2, dtype=rg.int64) for _ in range(size)]
    dist.all_gather(out, rg.tensor([rank, rank * 10]))
    assert [o.tolist() for o in out] == [[0, 0], [1, 10]]
    _raises(ValueError, lambda: dist.all_gather(out[:1], rg.tensor([1, 2])), "world_size (2)")

    o = rg.zeros(2, dtype=rg.float64)
    dist.reduce_scatter(o, [rg.tensor([1.0, 2.0], dtype=rg.float64) * (rank + 1),
                            rg.tensor([3.0, 4.0], dtype=rg.float64) * (rank + 1)])
    np.testing.assert_array_equal(o.numpy(), [[3.0, 6.0], [9.0, 12.0]][rank])
    dist.barrier()

    # several asynchronous collectives in flight at once, completed in any order
    ts = [rg.full((1000,), float(rank + k), dtype=rg.float64) for k in range(4)]
    works = [dist.all_reduce(x, async_op=True) for x in ts]
    assert all(isinstance(w, dist.Work) for w in works)
    b2 = rg.full((3,), float(rank))
    wb = dist.broadcast(b2, src=0, async_op=True)
    for w in reversed(works):
        assert w.wait() is True
        assert w.is_completed()
    wb.wait()
    for k, x in enumerate(ts):
        np.testing.assert_array_equal(x.numpy(), np.full(1000, 2.0 * k + 1))
    assert b2.tolist() == [0.0, 0.0, 0.0]
    wbar = dist.barrier(async_op=True)
    while not wbar.is_completed():
        time.sleep(0.001)
    dist.destroy_process_group()
    assert not dist.is_initialized()
    dist.init_process_group("mpi", world_size=2, rank=rank)  # a group may be created again
    t = rg.ones(1)
    dist.all_reduce(t)
    assert t.item() == 2.0
    dist.destroy_process_group()


def before_init():
    for fn in (lambda: dist.all_reduce(rg.ones(1)), dist.get_rank, dist.get_world_size, dist.barrier,
               lambda: dist.broadcast(rg.ones(1), 0)):
        _raises(RuntimeError, fn, "call init_process_group")
    _raises(ValueError, lambda: dist.init_process_group("nccl"), "Invalid backend")
    _raises(ValueError, lambda: dist.init_process_group("mpi", world_size=3), "world_size=3")
    dist.init_process_group("mpi")
    _raises(RuntimeError, lambda: dist.init_process_group("mpi"), "twice")
    _raises(TypeError, lambda: dist.all_reduce([1.0]), "must be Tensor")
    _raises(RuntimeError, lambda: dist.all_reduce(rg.ones(1, dtype=rg.int64), op=dist.ReduceOp.AVG),
            "floating point")
    dist.destroy_process_group()


def mismatch():
    dist.init_process_group("mpi", timeout=20)
    rank = dist.get_rank()
    t = rg.zeros(3 + rank)
    e = _raises(RuntimeError, lambda: dist.all_reduce(t), "differ across ranks")
    assert "rank 0 has float32 [3], rank 1 has float32 [4]" in str(e), e
    e = _raises(RuntimeError, lambda: dist.broadcast(rg.zeros(2, dtype=[rg.float32, rg.float64][rank]), 0),
                "rank 0 has float32 [2], rank 1 has float64 [2]")
    w = dist.all_reduce(rg.zeros((2, rank + 1)), async_op=True)
    _raises(RuntimeError, w.wait, "differ across ranks")
    if rank == 0:
        e = _raises(RuntimeError, lambda: dist.all_reduce(rg.zeros(2)), "different collectives")
    else:
        e = _raises(RuntimeError, lambda: dist.broadcast(rg.zeros(2), 0), "different collectives")
    assert "rank 0 called all_reduce, rank 1 called broadcast" in str(e)
    _raises(RuntimeError, lambda: dist.all_reduce(rg.ones(2), op=[dist.ReduceOp.SUM, dist.ReduceOp.MAX][rank]),
            "different reduce ops")
    # a mismatch fails that collective on every rank, and the group keeps working
    t = rg.ones(2)
    dist.all_reduce(t)
    assert t.tolist() == [2.0, 2.0]
    dist.destroy_process_group()


def dead_rank():
    dist.init_process_group("mpi", timeout=2)
    rank = dist.get_rank()
    dist.barrier()
    if rank == 1:
        raise SystemExit(3)  # this rank dies before the collective
    start = time.monotonic()
    _raises(RuntimeError, lambda: dist.all_reduce(rg.ones(4)), "timed out after 2 seconds on rank 0")
    assert time.monotonic() - start < 15
    _raises(RuntimeError, lambda: dist.all_reduce(rg.ones(4)), "unusable")
    print(f"PASS dead_rank rank {rank}", flush=True)
    os._exit(0)  # MPI_Finalize would wait for the dead rank


def _dies_then_survivor_recovers(die_during):
    """Rank 1 dies (os._exit(1)) in the middle of ``die_during``; rank 0 must raise RuntimeError naming
    it well before the group's timeout, fail a new init_process_group within its timeout, and exit."""
    dist.init_process_group("mpi", timeout=30)
    rank = dist.get_rank()
    dist.barrier()
    start = time.monotonic()
    e = _raises(RuntimeError, lambda: die_during(rank), "rank 1 (exit code 1) ended")
    assert time.monotonic() - start < 15, time.monotonic() - start
    assert str(e).startswith(("all_reduce failed on rank 0", "barrier failed on rank 0")), e
    dist.destroy_process_group()
    start = time.monotonic()
    _raises(RuntimeError, lambda: dist.init_process_group("mpi", timeout=1), "init_process_group")
    assert time.monotonic() - start < 15
    print(f"PASS {sys.argv[1]} rank {rank}", flush=True)
    sys.exit(0)  # a normal exit: MPI_Finalize must not wait for the dead rank


def dies_in_all_reduce():
    def die_during(rank):
        if rank == 1:
            time.sleep(0.3)  # rank 0 is in the all_reduce by now
            os._exit(1)
        dist.all_reduce(rg.ones(1000))
    _dies_then_survivor_recovers(die_during)


def dies_in_ddp_backward():
    from retrograd.nn.parallel import DistributedDataParallel as DDP

    def die_during(rank):
        params = _make_params(0)
        model = DDP(Net(params), bucket_cap_mb=1e-5)
        if rank == 1:  # dies after the first bucket's all_reduce has started
            model._grad_accs[0].register_prehook(lambda grads: os._exit(1))
        x, y = _data()
        _loss(model(x), y).backward()
    _dies_then_survivor_recovers(die_during)


# -- DistributedDataParallel --------------------------------------------------------------------
SHAPES = [(4, 8), (8,), (8, 3), (3,)]


def _make_params(seed, extra=0):
    rng = np.random.default_rng(seed)
    return [rg.tensor(rng.standard_normal(s), dtype=rg.float64, requires_grad=True)
            for s in SHAPES + [(3,)] * extra]


class Net:
    """A two-layer perceptron on plain tensors; ``u`` (if any) is used on rank 0 only, ``v`` never."""

    def __init__(self, params, rank=0):
        self.params, self.rank = params, rank

    def parameters(self):
        return iter(self.params)

    def __call__(self, x):
        w1, b1, w2, b2 = self.params[:4]
        out = (x @ w1 + b1).tanh() @ w2 + b2
        if len(self.params) > 4 and self.rank == 0:
            out = out + self.params[4]
        return out


def _data(n=16, seed=1):
    rng = np.random.default_rng(seed)
    return rg.tensor(rng.standard_normal((n, 4))), rg.tensor(rng.standard_normal((n, 3)))


def _loss(out, y):
    return ((out - y) ** 2).mean()


def _sgd(params, lr=0.1):
    with rg.no_grad():
        for p in params:
            p.sub_(lr * p.grad)
            p.grad = None


def _shard(t, rank, size):
    n = t.shape[0] // size
    return t[rank * n:(rank + 1) * n]


def ddp_equivalence():
    from retrograd.nn.parallel import DistributedDataParallel as DDP
    dist.init_process_group("mpi", timeout=20)
    rank, size = dist.get_rank(), dist.get_world_size()
    x, y = _data()
    reference = _make_params(0)
    ref_net = Net(reference)
    for _ in range(3):
        _loss(ref_net(x), y).backward()
        _sgd(reference)
    for cap in (25, 1e-5):  # one bucket for all; one bucket per parameter
        params = _make_params(rank)  # each rank starts elsewhere: DDP copies rank 0's values
        model = DDP(Net(params), bucket_cap_mb=cap)
        for p, q in zip(params, _make_params(0), strict=True):
            np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
        assert len(model._buckets) == (1 if cap == 25 else 4)
        if cap < 1:  # the first-used weight gets its gradient last: earlier buckets are already in flight
            seen = []
            model._grad_accs[0].register_prehook(lambda go: seen.append([b.work is not None for b in model._buckets]))
        for _ in range(3):
            _loss(model(_shard(x, rank, size)), _shard(y, rank, size)).backward()
            _sgd(params)
        if cap < 1:
            assert seen[0] == [True, True, True, False], seen
        for p, q in zip(params, reference, strict=True):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-12, atol=1e-14)

    # no_sync: two micro-batches accumulate locally, the second backward averages the sum
    ref = _make_params(0)
    xs, ys = _data(32, seed=2)
    for k in range(2):
        _loss(Net(ref)(xs[16 * k:16 * (k + 1)]), ys[16 * k:16 * (k + 1)]).backward()
    params = _make_params(0)
    model = DDP(Net(params), bucket_cap_mb=1e-5)
    with model.no_sync():
        _loss(model(_shard(xs[:16], rank, size)), _shard(ys[:16], rank, size)).backward()
    gathered = [rg.zeros(3, dtype=rg.float64) for _ in range(size)]
    dist.all_gather(gathered, params[3].grad)
    assert not np.allclose(gathered[0].numpy(), gathered[1].numpy())  # nothing was communicated
    _loss(model(_shard(xs[16:], rank, size)), _shard(ys[16:], rank, size)).backward()
    for p, q in zip(params, ref, strict=True):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-12, atol=1e-14)
    dist.destroy_process_group()


def ddp_unused():
    from retrograd.nn.parallel import DistributedDataParallel as DDP
    dist.init_process_group("mpi", timeout=20)
    rank, size = dist.get_rank(), dist.get_world_size()
    x, y = _data()
    params = _make_params(0, extra=2)
    model = DDP(Net(params, rank), bucket_cap_mb=1e-5, find_unused_parameters=True)
    for step in range(2):
        xr, yr = _shard(x, rank, size), _shard(y, rank, size)
        local = [p.detach().clone().requires_grad_() for p in params]
        grads = rg.autograd.grad(_loss(Net(local, rank)(xr), yr), local, allow_unused=True)
        expected = []
        for g, p in zip(grads, params, strict=True):
            e = rg.zeros_like(p.detach()) if g is None else g
            dist.all_reduce(e)
            expected.append(e.numpy() / size)
        _loss(model(xr), yr).backward()
        for i in range(5):  # u (index 4) gets rank 0's gradient, averaged, on both ranks
            np.testing.assert_allclose(params[i].grad.numpy(), expected[i], rtol=1e-12, atol=1e-14)
        assert params[5].grad is None  # v is used nowhere: its grad stays untouched
        _sgd(params[:5])

    # without find_unused_parameters, a parameter that got no gradient is an error
    params = _make_params(0, extra=2)
    model = DDP(Net(params, rank))
    _raises(RuntimeError, lambda: _loss(model(x), y).backward(), "find_unused_parameters=True")
    dist.destroy_process_group()


# -- RPC and distributed autograd ---------------------------------------------------------------
def _add(a, b):
    return a + b


def _where_am_i():
    from retrograd.distributed import rpc
    return rpc.get_worker_info().name


def _call_back(x):
    """Runs on worker1 and calls worker0 in turn: an RPC inside an RPC."""
    from retrograd.distributed import rpc
    return rpc.rpc_sync("worker0", _add, args=(x, 1.0)) * 10


def _raise_value_error():
    raise ValueError("remote boom")


def rpc_basic():
    from retrograd.distributed import rpc
    from mpi4py import MPI
    rank = MPI.COMM_WORLD.Get_rank()
    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=2)
    if rank == 0:
        out = rpc.rpc_sync("worker1", _add, args=(rg.ones(2), rg.tensor([1.0, 2.0])))
        assert out.tolist() == [2.0, 3.0]
        fut = rpc.rpc_async(1, _where_am_i)
        assert fut.wait() == "worker1"
        assert rpc.rpc_sync("worker1", _call_back, args=(rg.tensor([1.0]),)).tolist() == [20.0]
        rref = rpc.remote("worker1", _add, args=(rg.ones(3), 2.0))
        assert rref.owner_name() == "worker1" and not rref.is_owner()
        assert rref.to_here().tolist() == [3.0, 3.0, 3.0]
        local = rpc.RRef(rg.zeros(1))
        assert local.is_owner() and local.to_here().tolist() == [0.0]
        e = _raises(rpc.RemoteError, lambda: rpc.rpc_sync("worker1", _raise_value_error), "remote boom")
        assert "worker 'worker1'" in str(e) and "ValueError" in str(e)
        _raises(ValueError, lambda: rpc.rpc_sync("nobody", _add, args=(1, 2)), "Unknown destination")
    rpc.shutdown()
    _raises(RuntimeError, lambda: rpc.rpc_sync("worker1", _add, args=(1, 2)), "init_rpc")


class _BadBackward(rg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1

    @staticmethod
    def backward(ctx, grad):
        raise ValueError("bad backward")


def _layer(w_rref, h):
    return (h @ w_rref.local_value()).tanh()


def _middle(w2_rref, w3_rref, h):
    """worker1: its own layer, then worker0's last layer (the pass goes 0 -> 1 -> 0)."""
    from retrograd.distributed import rpc
    z = _layer(w2_rref, h)
    return rpc.rpc_sync("worker0", _last, args=(w3_rref, z))


def _last(w3_rref, z):
    return z @ w3_rref.local_value()


def _bad(h):
    return _BadBackward.apply(h)


def _grad_of(context_id, rref):
    from retrograd.distributed import autograd as dist_autograd
    grads = dist_autograd.get_gradients(context_id)
    w = rref.local_value()
    assert w.grad is None  # distributed backward never touches .grad
    return grads[w]


class _SGD:
    def __init__(self, params, lr):
        self.params, self.lr = params, lr

    def step(self):
        with rg.no_grad():
            for p in self.params:
                if p.grad is not None:
                    p.sub_(self.lr * p.grad)


def _split_model(seed):
    rng = np.random.default_rng(seed)
    return [rg.tensor(rng.standard_normal(s), requires_grad=True) for s in [(4, 5), (5, 6), (6, 3)]]


def _forward(params, x, y, remote):
    from retrograd.distributed import rpc
    w1, w2, w3 = params
    h = (x @ w1).tanh()
    out = rpc.rpc_sync("worker1", _middle, args=remote + (h,)) if remote else _last(
        rpc.RRef(w3), _layer(rpc.RRef(w2), h))
    return ((out - y) ** 2).mean()


def dist_autograd_split():
    import threading
    from retrograd.distributed import rpc, autograd as dist_autograd
    from retrograd.distributed.optim import DistributedOptimizer
    from mpi4py import MPI
    rank = MPI.COMM_WORLD.Get_rank()
    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=2)
    if rank == 0:
        rg.set_default_dtype(rg.float64)
        x, y = _data(8)
        params = _split_model(0)
        ref = [p.detach().clone().requires_grad_() for p in params]
        expected = rg.autograd.grad(_forward(ref, x, y, remote=False), ref)
        # w2 lives on worker1, w1 and w3 here
        w2_rref = rpc.remote("worker1", rg.Tensor.requires_grad_, args=(params[1].detach().clone(),))
        w3_rref = rpc.RRef(params[2])
        with dist_autograd.context() as cid:
            loss = _forward(params, x, y, remote=(w2_rref, w3_rref))
            np.testing.assert_allclose(loss.item(), _forward(ref, x, y, remote=False).item(), rtol=1e-13)
            dist_autograd.backward(cid, [loss])
            grads = dist_autograd.get_gradients(cid)
            assert params[0].grad is None and params[2].grad is None
            np.testing.assert_allclose(grads[params[0]].numpy(), expected[0].numpy(), rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(grads[params[2]].numpy(), expected[2].numpy(), rtol=1e-12, atol=1e-14)
            g2 = rpc.rpc_sync("worker1", _grad_of, args=(cid, w2_rref))
            np.testing.assert_allclose(g2.numpy(), expected[1].numpy(), rtol=1e-12, atol=1e-14)
            opt = DistributedOptimizer(_SGD, [rpc.RRef(params[0]), w2_rref, w3_rref], lr=0.5)
            opt.step(cid)
            np.testing.assert_allclose(w2_rref.to_here().detach().numpy(),
                                       (ref[1] - 0.5 * expected[1]).detach().numpy(), rtol=1e-12)
            np.testing.assert_allclose(params[0].detach().numpy(),
                                       (ref[0] - 0.5 * expected[0]).detach().numpy(), rtol=1e-12)
            assert params[0].grad is None

        # an error in a backward function on worker1 reaches the caller, naming worker1
        with dist_autograd.context() as cid:
            h = (x @ params[0]).tanh()
            loss = rpc.rpc_sync("worker1", _bad, args=(h,)).sum()
            e = _raises(rpc.RemoteError, lambda: dist_autograd.backward(cid, [loss]), "bad backward")
            assert "worker 'worker1'" in str(e), e

        # two contexts in flight at once (two threads) keep their gradients apart
        w2 = params[1].detach().clone().requires_grad_()
        w2_rref = rpc.remote("worker1", rg.Tensor.requires_grad_, args=(w2.detach().clone(),))
        both_forward = threading.Barrier(2)
        results = {}

        def train(k):
            xk = x * (k + 1)
            local = [p.detach().clone().requires_grad_() for p in (params[0], w2, params[2])]
            want = rg.autograd.grad(_forward(local, xk, y, remote=False), local)
            with dist_autograd.context() as cid:
                loss = _forward(params, xk, y, remote=(w2_rref, rpc.RRef(params[2])))
                both_forward.wait(timeout=20)
                dist_autograd.backward(cid, [loss])
                got = dist_autograd.get_gradients(cid)
                results[k] = (want, [got[params[0]], rpc.rpc_sync("worker1", _grad_of, args=(cid, w2_rref)),
                                     got[params[2]]])
        threads = [threading.Thread(target=train, args=(k,)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
        assert sorted(results) == [0, 1], results
        for want, got in results.values():
            for w, g in zip(want, got, strict=True):
                np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12, atol=1e-14)
        assert not np.allclose(results[0][1][0].numpy(), results[1][1][0].numpy())
    rpc.shutdown()


if __name__ == "__main__":
    import traceback

    from retrograd.distributed._collectives import _mpi
    MPI = _mpi()  # as init_process_group imports it: retrograd then decides MPI_Finalize at exit
    scenario = sys.argv[1]
    try:
        globals()[scenario]()
    except Exception:  # a failing rank takes the others down instead of leaving them waiting
        traceback.print_exc()
        sys.stderr.flush()
        MPI.COMM_WORLD.Abort(1)
    print(f"PASS {scenario} rank {MPI.COMM_WORLD.Get_rank()}", flush=True)
