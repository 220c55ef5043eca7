"""Data-parallel training of a small MLP: ``python -m retrograd.distributed.run -n 2 examples/ddp_train.py``.

Every rank trains on its share of each global batch; DistributedDataParallel averages the
gradients, so all ranks take the same steps. Rank 0 prints the throughput.
"""
import argparse
import time

import numpy as np

import retrograd as rg
import retrograd.distributed as dist
from retrograd.nn.parallel import DistributedDataParallel


class MLP:
    def __init__(self, sizes, seed=0):
        rng = np.random.default_rng(seed)
        self.params = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            self.params.append(rg.tensor(rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in),
                                         dtype=rg.float32, requires_grad=True))
            self.params.append(rg.zeros(fan_out, requires_grad=True))

    def parameters(self):
        return iter(self.params)

    def __call__(self, x):
        for i in range(0, len(self.params), 2):
            x = x @ self.params[i] + self.params[i + 1]
            if i + 2 < len(self.params):
                x = x.relu()
        return x


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--batch", type=int, default=512, help="global batch size")
    p.add_argument("--width", type=int, default=512)
    args = p.parse_args()
    dist.init_process_group("mpi")
    rank, size = dist.get_rank(), dist.get_world_size()
    net = MLP([128, args.width, args.width, 10])
    model = DistributedDataParallel(net)
    rng = np.random.default_rng(1)
    x_all = rg.tensor(rng.standard_normal((args.batch, 128)), dtype=rg.float32)
    y_all = rg.tensor(rng.standard_normal((args.batch, 10)), dtype=rg.float32)
    share = args.batch // size
    x, y = x_all[rank * share:(rank + 1) * share], y_all[rank * share:(rank + 1) * share]
    for step in range(args.steps + 5):
        if step == 5:  # warm-up done
            dist.barrier()
            start = time.perf_counter()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        with rg.no_grad():
            for p_ in net.params:
                p_.sub_(0.01 * p_.grad)
                p_.grad = None
    dist.barrier()
    elapsed = time.perf_counter() - start
    if rank == 0:
        print(f"{size} process(es): {args.steps * args.batch / elapsed:,.0f} samples/s "
              f"({elapsed / args.steps * 1000:.1f} ms/step, loss {loss.item():.4f})")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
