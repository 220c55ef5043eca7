"""The private C entry points refuse wrong arguments with an exception, never a crash.

Each entry point of both C modules is called in a child process with every count of arguments up
to nine, drawn from a pool of plausible and implausible objects (real nodes, tensors, GraphTasks,
queues, and numbers, tuples, None...); the child must exit normally.
"""
import os
import subprocess
import sys
import textwrap

import pytest

import retrograd as rg

pytestmark = pytest.mark.timeout(300)

_CHILD = textwrap.dedent("""
    import itertools, random, sys
    import retrograd as rg
    from retrograd._C import _engine_loop, _op_call
    from retrograd.autograd import engine
    from retrograd.autograd.graph_task import GraphTask, ReadyQueue
    x = rg.ones(2, requires_grad=True)
    y = (x * 2).sum()
    pool = [None, 1, -1, 2 ** 70, 0.5, (), [], {}, "s", x, y, y.grad_fn, engine.get_default_engine(),
            GraphTask(False, False, 0), ReadyQueue(), [x], (y.grad_fn, 0), [(y.grad_fn, 0)], [None]]
    rnd = random.Random(0)
    for module in (_engine_loop, _op_call):
        for name in sorted(n for n in dir(module) if not n.startswith("_") and callable(getattr(module, n))):
            fn = getattr(module, name)
            for n in range(10):
                for _ in range(25):
                    try:
                        fn(*[rnd.choice(pool) for _ in range(n)])
                    except BaseException:
                        pass
    (x * 3).sum().backward()  # and the engine still works
    assert x.grad.tolist() == [3.0, 3.0], x.grad
    print("survived")
""")


def test_entry_points_survive_wrong_arguments():
    if not rg.is_compiled():
        pytest.skip("the C modules are not built, or RETROGRAD_COMPILED=0")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, env=env, timeout=240)
    assert proc.returncode == 0 and "survived" in proc.stdout, proc.stderr[-2000:]
