"""The batching rules over the op sweep's samples: vmap(op) over 3 samples equals the stacked per-sample results.

Each sample of tests/ops/samples*.py runs twice under vmap: every input batched (three variants
of each floating input, integer and bool inputs repeated), and only the first batched. Either
the batched result equals the per-sample results stacked, or the rule refuses that case and says
so (PyTorch's "Batching rule not implemented for aten::<op>"); a third run batches only the last
input. Ops without a rule are listed (``WITHOUT_RULE``): they run once per sample (the fallback),
checked the same way.
The backward ops (``*_backward``) run only on physical tensors, inside the engine.
"""
import os
import sys

import numpy as np
import pytest

import retrograd as rg
from retrograd.func import vmap
from retrograd.func._rules import DYNAMIC_SHAPE, RANDOM_OPS, RULES
from retrograd.ops._declarations import REGISTRY

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "ops"))
import samples as _samples  # noqa: E402

SAMPLES = _samples.SAMPLES

# Ops of the table without a batching rule: vmap runs them once per sample.
WITHOUT_RULE = sorted(set(REGISTRY) - set(RULES) - DYNAMIC_SHAPE)
NO_RULE = "Batching rule not implemented for aten::"
INTO_UNBATCHED = "output with shape"


def _variants(a):
    if a.dtype.kind == "f":
        return [a, a * 0.5, a * 0.75]
    return [a, a, a]


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


def _arrays(sample):
    return [np.asarray(getattr(x, "array", x)) for x in sample.inputs]


def _run(sample, arrays, batched_mask):
    """(per-sample results stacked, the vmapped results), or None where the per-sample call itself fails."""
    try:
        per = []
        for b in range(3):
            ins = [rg.from_numpy(_variants(a)[b].copy() if batched else a.copy())
                   for a, batched in zip(arrays, batched_mask, strict=True)]
            per.append(_flat(sample.call(rg, *ins)))
    except Exception:  # noqa: BLE001 - a sample meant to raise: not a batching case
        return None
    ins = [rg.from_numpy(np.stack(_variants(a))) if batched else rg.from_numpy(a.copy())
           for a, batched in zip(arrays, batched_mask, strict=True)]
    dims = tuple(0 if batched else None for batched in batched_mask)
    try:
        out = _flat(vmap(lambda *ts: sample.call(rg, *ts), in_dims=dims)(*ins))
    except RuntimeError as e:
        # no rule; or, batching only a later input, an in-place write of a batch into an unbatched tensor
        assert str(e).startswith(NO_RULE) or not batched_mask[0] and str(e).startswith(INTO_UNBATCHED), str(e)
        return "no rule"
    expected = [np.stack([np.asarray(p[k].detach().numpy()) for p in per]) for k in range(len(per[0]))]
    return expected, [o.detach().numpy() for o in out]


# The backward ops run on physical tensors only (inside the engine); their samples call autograd.
_BACKWARD = {n for n in REGISTRY if n.endswith("_backward")}
RULED = sorted(n for n in SAMPLES if n in RULES and n not in RANDOM_OPS and n not in _BACKWARD)


@pytest.mark.parametrize("name", RULED)
def test_vmap_of_an_op_equals_the_stacked_per_sample_results(name):
    batched_runs = 0
    for sample in SAMPLES[name]:
        arrays = _arrays(sample)
        if not arrays:
            continue
        n = len(arrays)
        for mask in ([True] * n, [True] + [False] * (n - 1), [False] * (n - 1) + [True])[:3 if n > 1 else 1]:
            got = _run(sample, arrays, mask)
            if got is None or got == "no rule":
                continue
            expected, out = got
            assert len(out) == len(expected), sample
            for e, o in zip(expected, out, strict=True):
                assert o.shape == e.shape, sample
                np.testing.assert_allclose(o, e, rtol=1e-6, atol=1e-12, equal_nan=True, err_msg=repr(sample))
            batched_runs += 1
    assert batched_runs, f"no sample of {name!r} ran batched"


@pytest.mark.parametrize("name", sorted(RANDOM_OPS & set(SAMPLES)))
def test_vmap_of_a_random_op_draws_a_batch_under_different_randomness(name):
    sample = SAMPLES[name][0]
    arrays = _arrays(sample)
    ins = [rg.from_numpy(np.stack(_variants(a))) for a in arrays]
    per = _flat(sample.call(rg, *[rg.from_numpy(a.copy()) for a in arrays]))
    out = _flat(vmap(lambda *ts: sample.call(rg, *ts), randomness="different")(*ins))
    assert [tuple(o.shape) for o in out] == [(3,) + tuple(p.shape) for p in per]


@pytest.mark.parametrize("name", [n for n in WITHOUT_RULE if n in SAMPLES and n not in _BACKWARD])
def test_an_op_without_a_rule_runs_once_per_sample(name):
    # See Note [Batching rules]: the fallback gives exactly the per-sample results, stacked
    batched_runs = 0
    for sample in SAMPLES[name]:
        arrays = _arrays(sample)
        if not arrays:
            continue
        got = _run(sample, arrays, [True] * len(arrays))
        if got is None or got == "no rule":
            continue
        expected, out = got
        for e, o in zip(expected, out, strict=True):
            assert o.shape == e.shape, sample
            np.testing.assert_allclose(o, e, rtol=1e-6, atol=1e-12, equal_nan=True, err_msg=repr(sample))
        batched_runs += 1
    assert batched_runs, f"no sample of {name!r} ran batched"
