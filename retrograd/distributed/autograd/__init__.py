"""retrograd.distributed.autograd: backward passes that follow tensors across RPCs, as PyTorch's.

Note [Distributed autograd]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
``context()`` opens a context whose id travels with every RPC made inside it, so every worker
a forward pass touches holds a context of the same id. When a tensor that requires grad
crosses an RPC, the sender records a ``SendRpcBackward`` node (its edges lead to the sent
tensors' graph) under a send id in its context, and the receiver gets tensors that are
outputs of a ``RecvRpcBackward`` node naming the sender and that send id. Requests and
responses alike.

``backward(context_id, roots)`` is PyTorch's FAST mode: it assumes every send function of the
context receives a gradient. The caller builds one GraphTask for the context whose dependencies
count from the roots *and* from every send function of its context, with one outstanding task
per send function (so the task cannot finish before they have all run), and runs it with the
engine's ``execute_with_graph_task``. Leaves are not accumulated into ``.grad``: each
``AccumulateGrad`` only captures its gradient (``exec_info``), and the captures are added to
the context's gradients (``get_gradients``). A ``RecvRpcBackward`` sends its gradients to the
worker that sent the tensors and records the reply's Future in the context; it never blocks.

On the worker receiving such gradients, the first message for a context builds the same kind
of GraphTask (send functions only), pushes the send function with its gradients through
``enqueue_blocked_task_on_cpu`` and runs the task on the handler's thread; it replies once the
task has finished *and* every gradient it sent onward has been acknowledged, so the caller's
wait covers the whole distributed pass. Later messages for a context whose task is running only
enqueue their send function and reply at once; that is what keeps a pass that bounces
between two workers (A -> B -> A) from waiting on itself. An error fails the GraphTask at once
(``exit_on_error``); the reply carries it back, naming the worker, and fails the caller's task.
Leaving the context releases it on every worker it reached.
"""
from __future__ import annotations

import itertools
import threading
from concurrent.futures import Future

import numpy as np

from ..._creation import from_numpy, ones_like
from ..._device import cpu
from ..._tensor import Tensor
from ...autograd import grad_mode
from ...autograd.accumulate_grad import AccumulateGrad
from ...autograd.engine import Engine, get_default_engine
from ...autograd.graph import _NodeBase as Node, GraphRoot, Edge
from ...autograd.graph_task import GraphTask, NodeTask, local as _engine_local
from ...autograd.input_buffer import InputBuffer
from ...autograd.variable import gradient_edge
from .._current_agent import current_agent, get_agent

__all__ = ["context", "backward", "get_gradients", "SendRpcBackward", "RecvRpcBackward"]

_worker_id = 0
_context_ids = itertools.count(1)
_send_ids = itertools.count()
_contexts = {}
_contexts_lock = threading.Lock()
_local = threading.local()


class _Context:
    """One worker's share of a distributed autograd context."""

    def __init__(self, context_id):
        self.id = context_id
        self.lock = threading.RLock()
        self.sends = {}  # send id -> SendRpcBackward
        self.known_workers = set()
        self.grads = {}  # leaf Tensor -> accumulated gradient
        self.graph_task = None  # the pass in progress on this worker
        self.outstanding = []  # Futures of gradients sent to other workers during the pass


def _reset_worker(rank) -> None:
    global _worker_id
    _worker_id = rank
    with _contexts_lock:
        _contexts.clear()


def _retrieve(context_id, create=False) -> _Context:
    with _contexts_lock:
        ctx = _contexts.get(context_id)
        if ctx is None:
            if not create:
                raise RuntimeError(f"Could not find autograd context with id: {context_id}")
            ctx = _contexts[context_id] = _Context(context_id)
        return ctx


def _current():
    return getattr(_local, "context", None)


class context:
    """Opens a distributed autograd context; ``with context() as context_id:``.

    Every RPC made inside it carries ``context_id``, so backward can follow the tensors
    across workers. Leaving the context frees it on every worker it reached.

    Example::
        >>> with dist_autograd.context() as context_id:                         # doctest: +SKIP
        ...     loss = rpc.rpc_sync("worker1", torch_fn, args=(x,)).sum()
        ...     dist_autograd.backward(context_id, [loss])
        ...     grads = dist_autograd.get_gradients(context_id)
    """

    def __enter__(self) -> int:
        get_agent()
        if _current() is not None:
            raise RuntimeError("Already have an autograd context id for this thread.")
        self.id = (_worker_id << 40) | next(_context_ids)
        _local.context = _retrieve(self.id, create=True)
        return self.id

    def __exit__(self, *exc):
        _local.context = None
        _release(self.id, None)


def _release(context_id, sender) -> None:
    """Frees the context here and asks the workers it reached to do the same."""
    with _contexts_lock:
        ctx = _contexts.pop(context_id, None)
    if ctx is None:
        return
    gt = ctx.graph_task
    if gt is not None:
        _fail(gt, RuntimeError(f"autograd context {context_id} was released during its backward pass"))
    agent = current_agent()
    if agent is not None:
        for worker in ctx.known_workers - {sender, agent.rank}:
            agent.request(worker, "cleanup", context_id)  # no reply awaited: workers may form a cycle


class SendRpcBackward(Node):
    """Where gradients for tensors sent over an RPC re-enter the sender's graph."""

    __slots__ = ()

    def apply(self, grads):
        return list(grads)


class RecvRpcBackward(Node):
    """The origin of tensors received over an RPC; its backward sends their gradients home."""

    __slots__ = ("context", "src", "send_id")

    def __init__(self, ctx, src, send_id, input_metadata):
        super().__init__((), input_metadata)
        self.context, self.src, self.send_id = ctx, src, send_id

    def apply(self, grads):
        gt = _engine_local.current_graph_task
        payload = (self.context.id, self.send_id, [None if g is None else g._host() for g in grads],
                   gt.keep_graph)
        fut = get_agent().request(self.src, "backward", payload)
        with self.context.lock:
            self.context.outstanding.append(fut)
        fut.add_done_callback(lambda f: f.exception() is None or _fail(gt, f.exception()))
        return ()


def _fail(gt, exc) -> None:
    """Fails a GraphTask from any thread and wakes the thread that drives it."""
    gt.set_exception(exc, None)
    gt.cpu_ready_queue.push_task(NodeTask(gt, None, None))


# -- packing tensors into RPC messages ---------------------------------------------------------------
class _WireTensor:
    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index

    def __reduce__(self):
        return _WireTensor, (self.index,)


def _map(obj, fn):
    if type(obj) in (list, tuple):
        return type(obj)(_map(o, fn) for o in obj)
    if type(obj) is dict:
        return {k: _map(v, fn) for k, v in obj.items()}
    return fn(obj)


def _pack(obj, dst):
    """``(wire, meta)`` for a message to rank ``dst``: tensors become arrays; a send is recorded if needed."""
    tensors = []

    def take(o):
        if isinstance(o, Tensor):
            tensors.append(o)
            return _WireTensor(len(tensors) - 1)
        return o
    wire = _map(obj, take)
    arrays = [(t._host(), t.requires_grad) for t in tensors]
    ctx = _current()
    if ctx is None:
        return (wire, arrays), None
    ctx.known_workers.add(dst)
    needs = [i for i, t in enumerate(tensors) if t.requires_grad]
    send_id = None
    if needs and grad_mode.state.grad_enabled:
        send = SendRpcBackward([gradient_edge(tensors[i]) for i in needs],
                               [(tuple(tensors[i].shape), tensors[i]._data.dtype, tensors[i]._device)
                                for i in needs])
        send_id = (_worker_id, next(_send_ids))
        with ctx.lock:
            ctx.sends[send_id] = send
    return (wire, arrays), (ctx.id, send_id, needs)


def _unpack(packed, meta, src):
    """Rebuilds a message's objects; tensors sent with a send id become outputs of a RecvRpcBackward."""
    wire, arrays = packed
    tensors = [Tensor._make(np.array(a), cpu, requires_grad=rg and a.dtype.kind in "fV") for a, rg in arrays]
    if meta is not None:
        ctx = _retrieve(meta[0], create=True)
        ctx.known_workers.add(src)
        context_id, send_id, needs = meta
        if send_id is not None:
            recv = RecvRpcBackward(ctx, src, send_id, [(tuple(tensors[i].shape), tensors[i]._data.dtype, cpu)
                                                       for i in needs])
            for k, i in enumerate(needs):
                t = tensors[i]
                t._requires_grad, t._node, t._output_nr = True, recv, k
    return _map(wire, lambda o: tensors[o.index] if isinstance(o, _WireTensor) else o)


def _unpacking(fut, src) -> Future:
    """A Future of the unpacked result of a request Future."""
    out = Future()

    def done(f):
        exc = f.exception()
        if exc is not None:
            out.set_exception(exc)
            return
        try:
            out.set_result(_unpack(*f.result(), src))
        except BaseException as err:  # noqa: BLE001
            out.set_exception(err)
    fut.add_done_callback(done)
    return out


class _received:
    """Runs a request's handler inside the context the request came from (if any)."""

    def __init__(self, meta, src):
        self.ctx = None if meta is None else _retrieve(meta[0], create=True)
        if self.ctx is not None:
            self.ctx.known_workers.add(src)

    def __enter__(self):
        self.prev, _local.context = _current(), self.ctx

    def __exit__(self, *exc):
        _local.context = self.prev


# -- the backward pass -------------------------------------------------------------------------------
def _prepare(ctx, root_edges, seeds, retain_graph):
    """A GraphTask for this worker's share of the pass. See Note [Distributed autograd]."""
    gt = GraphTask(keep_graph=retain_graph, grad_mode=False, reentrant_depth=0, exit_on_error=True)
    graph_root = GraphRoot(root_edges, seeds)
    with ctx.lock:
        sends = list(ctx.sends.values())
    everything = GraphRoot(list(root_edges) + [Edge(s, 0) for s in sends], [])
    Engine.compute_dependencies(everything, gt)
    for s in sends:
        gt.dependencies.pop(s, None)
    exec_info, accs, seen, stack = {graph_root: [True, None]}, [], set(), [everything]
    while stack:
        for edge in stack.pop().next_edges:
            if edge is not None and edge[0] not in seen:
                node = edge[0]
                seen.add(node)
                if type(node) is AccumulateGrad:
                    exec_info[node] = [False, [(0, len(accs))]]
                    accs.append(node)
                else:
                    exec_info[node] = [True, None]
                    stack.append(node)
    gt.exec_info = exec_info
    gt.captured_vars = [None] * len(accs)
    gt.outstanding_tasks += len(sends)
    ctx.graph_task = gt
    return gt, graph_root, accs


def _run(ctx, gt, graph_root, accs) -> None:
    """Drives the GraphTask to its end, adds the captures to the context, waits for the gradients sent on."""
    timeout = get_agent().timeout
    watchdog = threading.Timer(timeout, _fail, (gt, RuntimeError(
        f"distributed backward of context {ctx.id} timed out after {timeout:g} seconds: a gradient expected "
        f"from another worker never came")))
    watchdog.daemon = True
    watchdog.start()
    try:
        captured = get_default_engine().execute_with_graph_task(gt, graph_root).result()
        with ctx.lock:
            for acc, grad in zip(accs, captured, strict=True):
                var = acc.variable
                if grad is not None and var is not None:
                    old = ctx.grads.get(var)
                    ctx.grads[var] = grad.detach() if old is None else old + grad
        while True:
            with ctx.lock:
                futures, ctx.outstanding = ctx.outstanding, []
            if not futures:
                break
            for f in futures:
                f.result(timeout=timeout)
    finally:
        watchdog.cancel()
        with ctx.lock:
            if ctx.graph_task is gt:
                ctx.graph_task = None


def backward(context_id, roots, retain_graph=False) -> None:
    """Runs the backward pass of ``roots`` across every worker the context reached.

    Gradients of leaves on each worker are accumulated into that worker's context (read them
    with ``get_gradients``), not into ``.grad``.

    Args:
        context_id (int): the id ``context()`` returned.
        roots (list of Tensor): scalar tensors to differentiate.
        retain_graph (bool): keep the graphs (on all workers) for another pass.

    Raises:
        RuntimeError: an unknown context; a root that does not require grad; an error in a
            backward function on any worker (its message names the worker).
    """
    ctx = _retrieve(context_id)
    edges, seeds = [], []
    for i, root in enumerate(roots):
        edge = gradient_edge(root)
        if edge is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if root.numel() != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        edges.append(edge)
        seeds.append(ones_like(root.detach()))
    with ctx.lock:
        if ctx.graph_task is not None:
            raise RuntimeError(f"a backward pass of autograd context {context_id} is already running")
        gt, graph_root, accs = _prepare(ctx, edges, seeds, retain_graph)
    _run(ctx, gt, graph_root, accs)


def get_gradients(context_id) -> dict:
    """The gradients of this worker's leaves accumulated in the context: ``{tensor: grad}``."""
    ctx = _retrieve(context_id)
    with ctx.lock:
        return dict(ctx.grads)


def _handle(src, kind, payload):
    """Serves the autograd messages of other workers."""
    if kind == "cleanup":
        _release(payload, src)
        return None
    if kind != "backward":
        raise RuntimeError(f"unknown RPC message kind {kind!r}")
    context_id, send_id, grads, retain_graph = payload
    ctx = _retrieve(context_id)
    send = ctx.sends.get(send_id)
    if send is None:
        raise RuntimeError(f"autograd context {context_id} has no send function {send_id}")
    with ctx.lock:
        first = ctx.graph_task is None
        if first:
            gt, graph_root, accs = _prepare(ctx, [], [], retain_graph)
        gt = ctx.graph_task
    buffer = InputBuffer(len(send.input_metadata))
    for i, g in enumerate(grads):
        if g is not None:
            buffer.add(i, from_numpy(g))
    get_default_engine().enqueue_blocked_task_on_cpu(NodeTask(gt, send, buffer))
    if first:
        _run(ctx, gt, graph_root, accs)
    return None
