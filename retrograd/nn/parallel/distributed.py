"""DistributedDataParallel: averages gradients across ranks while backward runs, as PyTorch's DDP.

Note [Gradient buckets]
~~~~~~~~~~~~~~~~~~~~~~~
Parameters are grouped into buckets of at most ``bucket_cap_mb`` (one dtype each), in reverse
order of registration, which approximates the order in which backward produces their
gradients. A post-hook on each parameter's ``AccumulateGrad`` node runs right after the
gradient lands in ``.grad``: it copies the gradient into its slice of the bucket's flat buffer
and marks the parameter ready. When every parameter of a bucket is ready, the bucket's
non-blocking ``all_reduce(AVG)`` starts at once, while backward goes on computing the next
gradients; the process group's progress thread keeps it moving. Buckets start strictly in
index order on every rank (a bucket that fills early waits for its predecessors), so the ranks
issue the same collectives in the same order. The first hook of a pass queues an engine
callback (``queue_callback``) that runs when backward ends: it waits for every bucket and
writes the averaged gradients back into ``.grad``.

With ``find_unused_parameters=True``, ``forward`` walks the output's graph to find the
parameters it does not reach; they are marked ready (with a zero slice) when backward begins,
and a small all-reduce of "used" flags after the buckets tells each rank which of its locally
unused parameters got a gradient elsewhere (it receives the average) and which got none
anywhere (its ``.grad`` is left untouched).
"""
from __future__ import annotations

import contextlib
import threading

import numpy as np

from ... import distributed as dist
from ..._creation import from_numpy
from ..._tensor import Tensor
from ...autograd import grad_mode
from ...autograd.engine import queue_callback
from ...autograd.variable import grad_accumulator
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]


class _Bucket:
    """Flat gradient storage for a few parameters of one dtype, all-reduced as one tensor."""

    def __init__(self, indices, params):
        self.indices = indices  # parameter indices, in the order of their slices
        self.offsets = {}
        total = 0
        for i in indices:
            self.offsets[i] = (total, total + params[i]._data.size)
            total += params[i]._data.size
        self.buffer = np.zeros(total, params[indices[0]]._data.dtype)
        self.pending = len(indices)
        self.work = None


class DistributedDataParallel(Module):
    """Wraps ``module`` so that ``backward`` leaves the rank-average of the gradients in ``.grad``.

    Every rank runs the same model on its own share of each batch; after ``loss.backward()``
    every parameter's ``.grad`` is the average over ranks, so each rank's optimizer takes the
    same step and the replicas stay identical. Gradients are all-reduced in buckets while
    backward still runs. See Note [Gradient buckets].

    Args:
        module (Module): the model; its parameters appear under ``module.`` in ``state_dict()``,
            as in PyTorch.
        bucket_cap_mb (float): the most megabytes of gradients per bucket (default 25).
        find_unused_parameters (bool): allow parameters that get no gradient in an iteration
            (a branch not taken); costs a graph walk per forward and one small all-reduce.
        process_group: the group to average over (only the default group, None, is supported).
        broadcast_buffers (bool): also copy ``module.buffers()`` from rank 0 at every forward.

    Raises:
        RuntimeError: before ``init_process_group``; at the end of backward, if a parameter
            got no gradient and ``find_unused_parameters`` is False.

    Example::
        >>> dist.init_process_group("mpi")                         # doctest: +SKIP
        >>> model = DistributedDataParallel(net)                    # doctest: +SKIP
        >>> model(x_of_this_rank).mean().backward()                 # doctest: +SKIP
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=25, find_unused_parameters=False,
                 gradient_as_bucket_view=False, static_graph=False):
        super().__init__()
        self.module = module
        self.process_group = process_group
        self.world_size = dist.get_world_size(process_group)
        self.find_unused_parameters = find_unused_parameters
        self.broadcast_buffers = broadcast_buffers
        self.require_backward_grad_sync = True
        seen = set()
        self._params = []
        for p in module.parameters():
            if p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                self._params.append(p)
        self._sync_from_rank0(self._params)
        self._sync_from_rank0(self._module_buffers())
        self._buckets, self._bucket_of = self._build_buckets(float(bucket_cap_mb) * 2 ** 20)
        self._lock = threading.RLock()  # _start_reduction marks unused parameters under it
        self._reduction = None  # the state of the pass in progress, see _start_reduction
        self._locally_unused = ()
        # The leaf holds its AccumulateGrad only weakly: keep each alive so its hook stays.
        self._grad_accs = []
        self._acc_index = {}
        for i, p in enumerate(self._params):
            acc = grad_accumulator(p)
            acc.register_hook(self._make_hook(i))
            self._grad_accs.append(acc)
            self._acc_index[acc] = i

    # -- construction -------------------------------------------------------------------------
    def _module_buffers(self):
        buffers = getattr(self.module, "buffers", None)  # a plain callable model may have none
        return list(buffers()) if callable(buffers) else []

    def _sync_from_rank0(self, tensors) -> None:
        works = [dist.broadcast(t, 0, group=self.process_group, async_op=True) for t in tensors]
        for w in works:
            w.wait()

    def _build_buckets(self, cap_bytes):
        buckets, current, size, dtype = [], [], 0, None
        for i in reversed(range(len(self._params))):
            arr = self._params[i]._data
            if current and (arr.dtype != dtype or size + arr.nbytes > cap_bytes):
                buckets.append(_Bucket(current, self._params))
                current, size = [], 0
            current.append(i)
            size += arr.nbytes
            dtype = arr.dtype
        if current:
            buckets.append(_Bucket(current, self._params))
        bucket_of = {}
        for b, bucket in enumerate(buckets):
            for i in bucket.indices:
                bucket_of[i] = b
        return buckets, bucket_of

    # -- forward ------------------------------------------------------------------------------
    def forward(self, *inputs, **kwargs):
        """Runs the wrapped module; with ``find_unused_parameters``, notes which parameters it skipped."""
        if self.broadcast_buffers and self.world_size > 1:
            self._sync_from_rank0(self._module_buffers())
        output = self.module(*inputs, **kwargs)
        if self.find_unused_parameters and grad_mode.state.grad_enabled and self.require_backward_grad_sync:
            used = self._reached_params(output)
            self._locally_unused = tuple(i for i in range(len(self._params)) if i not in used)
        return output

    __call__ = forward

    def _reached_params(self, output):
        """Indices of the parameters whose AccumulateGrad the output's graph reaches."""
        stack, seen, used = [], set(), set()

        def collect(obj):
            if isinstance(obj, Tensor):
                if obj.grad_fn is not None:
                    stack.append(obj.grad_fn)
                elif obj.requires_grad and obj._grad_accumulator is not None:
                    stack.append(obj._grad_accumulator())
            elif isinstance(obj, (list, tuple)):
                for o in obj:
                    collect(o)
            elif isinstance(obj, dict):
                for o in obj.values():
                    collect(o)
        collect(output)
        while stack:
            node = stack.pop()
            if node is None or node in seen:
                continue
            seen.add(node)
            index = self._acc_index.get(node)
            if index is not None:
                used.add(index)
            stack.extend(edge[0] for edge in node.next_edges if edge is not None)
        return used

    @contextlib.contextmanager
    def no_sync(self):
        """Inside this context, backward only accumulates local gradients (no communication).

        The first backward after the context averages the accumulated gradients.

        Example::
            >>> with ddp.no_sync():                                 # doctest: +SKIP
            ...     ddp(x0).sum().backward()
            >>> ddp(x1).sum().backward()  # averages the gradients of x0 and x1
        """
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    # -- backward: see Note [Gradient buckets] -------------------------------------------------
    def _make_hook(self, index):
        def hook(grad_inputs, grad_outputs):
            if self.require_backward_grad_sync:
                self._mark_ready(index)
        hook.__name__ = "ddp_mark_ready"
        return hook

    def _start_reduction(self) -> None:
        n = len(self._params)
        self._reduction = {"next_bucket": 0, "used": np.zeros(n, np.int32), "ready": np.zeros(n, bool)}
        for bucket in self._buckets:
            bucket.pending = len(bucket.indices)
            bucket.work = None
        queue_callback(self._finalize)
        for i in self._locally_unused:
            self._mark_ready(i, used=False)

    def _mark_ready(self, index, used=True) -> None:
        with self._lock:
            if self._reduction is None:
                self._start_reduction()
            reduction = self._reduction
            if reduction["ready"][index]:
                raise RuntimeError(f"Expected to mark a variable ready only once. Parameter {index} got a "
                                   f"gradient twice in one backward pass (reentrant backward or a shared module)"
                                   f"; DistributedDataParallel cannot average it.")
            bucket = self._buckets[self._bucket_of[index]]
            lo, hi = bucket.offsets[index]
            grad = self._params[index].grad if used else None
            if grad is None:
                bucket.buffer[lo:hi] = 0
            else:
                bucket.buffer[lo:hi] = grad._data.reshape(-1)
                reduction["used"][index] = 1
            reduction["ready"][index] = True
            bucket.pending -= 1
            self._launch_ready_buckets()

    def _launch_ready_buckets(self) -> None:
        reduction = self._reduction
        while reduction["next_bucket"] < len(self._buckets):
            bucket = self._buckets[reduction["next_bucket"]]
            if bucket.pending > 0:
                return
            bucket.work = dist.all_reduce(from_numpy(bucket.buffer), op=dist.ReduceOp.AVG,
                                          group=self.process_group, async_op=True)
            reduction["next_bucket"] += 1

    def _finalize(self) -> None:
        """Runs when backward ends: waits for every bucket and writes the averages into ``.grad``."""
        with self._lock:
            reduction, self._reduction = self._reduction, None
            missing = [i for i in range(len(self._params)) if not reduction["ready"][i]]
            if missing or reduction["next_bucket"] < len(self._buckets):
                raise RuntimeError(
                    "Expected to have finished reduction in the prior iteration before starting a new one. This "
                    "error indicates that your module has parameters that were not used in producing loss. You "
                    "can enable unused parameter detection by passing the keyword argument "
                    "`find_unused_parameters=True` to `retrograd.nn.parallel.DistributedDataParallel`. Parameter "
                    f"indices which did not receive grad for rank {dist.get_rank()}: {missing}")
            for bucket in self._buckets:
                bucket.work.wait()
            globally_used = None
            if self.find_unused_parameters:
                globally_used = from_numpy(reduction["used"].copy())
                dist.all_reduce(globally_used, op=dist.ReduceOp.MAX, group=self.process_group)
                globally_used = globally_used._data
            for bucket in self._buckets:
                for i in bucket.indices:
                    self._write_back(i, bucket, reduction["used"][i], globally_used)
            self._locally_unused = ()

    def _write_back(self, index, bucket, locally_used, globally_used) -> None:
        param = self._params[index]
        lo, hi = bucket.offsets[index]
        averaged = bucket.buffer[lo:hi].reshape(param.shape)
        if locally_used:
            grad = param.grad
            grad._data[...] = averaged
            grad._version_counter.bump()
        elif globally_used is not None and globally_used[index]:
            param.grad = from_numpy(averaged.copy())

