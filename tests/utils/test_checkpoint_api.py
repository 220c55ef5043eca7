"""retrograd.utils.checkpoint's names, signatures, warnings and argument errors, against torch.utils.checkpoint."""
import contextlib
import doctest
import functools
import inspect
import re
import warnings

import numpy as np
import pytest

import retrograd as rg
import retrograd.utils.checkpoint as rck

torch = pytest.importorskip("torch")
import torch.utils.checkpoint as tck  # noqa: E402

MODULES = {"retrograd": rck, "torch": tck}


def first_sentence(text):
    match = re.match(r"(.*?[.!?])(\s|$)", text, re.S)
    return match.group(1) if match else text


def outcome(fn):
    """What ``fn()`` returns, or the type and first sentence of what it raises."""
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return (type(e).__name__, first_sentence(str(e)))


def _lib(ck_module):
    return rg if ck_module is rck else torch


def test_the_module_has_torch_s_public_names():
    assert set(rck.__all__) == set(tck.__all__)
    for name in rck.__all__:
        assert hasattr(rck, name), name


@pytest.mark.parametrize("name", ["checkpoint", "checkpoint_sequential", "create_selective_checkpoint_contexts",
                                  "set_checkpoint_early_stop", "set_checkpoint_debug_enabled", "detach_variable",
                                  "check_backward_validity", "noop_context_fn", "get_device_states"])
def test_signatures_are_torch_s(name):
    def params(fn):
        fn = inspect.unwrap(fn)
        return [(p.name, p.kind, p.default if p.default is inspect.Parameter.empty or p.name != "context_fn"
                 else "noop") for p in inspect.signature(fn).parameters.values()]
    assert params(getattr(rck, name)) == params(getattr(tck, name))


def test_checkpoint_error_is_a_runtime_error():
    assert issubclass(rck.CheckpointError, RuntimeError) and issubclass(tck.CheckpointError, RuntimeError)


def _warnings_of(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [(w.category.__name__, first_sentence(str(w.message))) for w in caught]


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_passing_use_reentrant_does_not_warn(use_reentrant):
    for ck_module in MODULES.values():
        lib = _lib(ck_module)
        a = lib.randn(3, requires_grad=True)
        mods = [lib.nn.Linear(3, 3) for _ in range(3)]
        assert _warnings_of(lambda: ck_module.checkpoint(lambda x: x.sin(), a, use_reentrant=use_reentrant)) == []
        assert _warnings_of(lambda: ck_module.checkpoint_sequential(mods, 3, a, use_reentrant=use_reentrant)) == []


def test_leaving_out_use_reentrant_warns_as_torch_and_means_reentrant():
    def make(ck_module):
        lib = _lib(ck_module)
        a = lib.randn(3, requires_grad=True)
        mods = [lib.nn.Linear(3, 3) for _ in range(3)]
        single = _warnings_of(lambda: ck_module.checkpoint(lambda x: x.sin(), a))
        sequence = _warnings_of(lambda: ck_module.checkpoint_sequential(mods, 3, a))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kind = type(ck_module.checkpoint(lambda x: x.sin(), a).grad_fn).__name__
        return single, sequence, kind
    assert make(rck) == make(tck) == (
        [("UserWarning", "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly.")],
        [("UserWarning", "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
                         "explicitly.")],
        "CheckpointFunctionBackward")


def test_warning_points_at_the_caller():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rck.checkpoint(lambda x: x.sin(), rg.randn(3, requires_grad=True))
    assert caught[0].filename == __file__


def test_argument_errors_are_torch_s():
    def make(ck_module):
        lib = _lib(ck_module)
        a = lib.randn(3, requires_grad=True)

        def nulls():
            return contextlib.nullcontext(), contextlib.nullcontext()
        return [
            outcome(lambda: ck_module.checkpoint(lambda x, k: x * k, a, k=2, use_reentrant=True)),
            outcome(lambda: ck_module.checkpoint(lambda x, k: x * k, a, k=2, bad=1)),
            outcome(lambda: ck_module.checkpoint(lambda x: x, a, use_reentrant=True, context_fn=nulls)),
            outcome(lambda: ck_module.checkpoint(lambda x: x, a, use_reentrant=True, debug=True)),
            outcome(lambda: ck_module.checkpoint_sequential([lambda x: x], 1, a, use_reentrant=False, foo=1)),
            outcome(lambda: ck_module.detach_variable([a])),
        ]
    assert make(rck) == make(tck) == [
        ("ValueError", "Unexpected keyword arguments: k"),
        ("ValueError", "Unexpected keyword arguments: k,bad"),
        ("ValueError", "Passing `context_fn` or `debug` is only supported when use_reentrant=False."),
        ("ValueError", "Passing `context_fn` or `debug` is only supported when use_reentrant=False."),
        ("ValueError", "Unexpected keyword arguments: foo"),
        ("RuntimeError", "Only tuple of tensors is supported."),
    ]


def test_keyword_arguments_and_preserve_rng_state_with_the_non_reentrant_form():
    for ck_module in MODULES.values():
        lib = _lib(ck_module)
        a = lib.randn(3, requires_grad=True)
        out = ck_module.checkpoint(lambda x, k: x * k, a, k=2.0, use_reentrant=False, preserve_rng_state=False)
        out.sum().backward()
        assert a.grad.tolist() == [2.0, 2.0, 2.0]


def test_detach_variable_detaches_and_keeps_requires_grad():
    x = rg.randn(2, requires_grad=True) * 2
    y = rg.randn(2)
    dx, dy, k = rck.detach_variable((x, y, 3))
    assert dx.requires_grad and dx.grad_fn is None and dx.is_leaf
    assert not dy.requires_grad and k == 3
    assert np.shares_memory(dx.detach().numpy(), x.detach().numpy())


def test_check_backward_validity_warns_without_an_input_that_requires_grad():
    for ck_module in MODULES.values():
        lib = _lib(ck_module)
        assert _warnings_of(lambda: ck_module.check_backward_validity([lib.ones(1), 2])) == [
            ("UserWarning", "None of the inputs have requires_grad=True.")]
        assert _warnings_of(lambda: ck_module.check_backward_validity([lib.ones(1, requires_grad=True)])) == []


def test_noop_context_fn_gives_two_null_contexts():
    forward, recompute = rck.noop_context_fn()
    assert isinstance(forward, contextlib.nullcontext) and isinstance(recompute, contextlib.nullcontext)


def test_global_switches_restore_what_they_replaced():
    with rck.set_checkpoint_early_stop(False):
        with rck.set_checkpoint_early_stop(True):
            assert rck._enable_checkpoint_early_stop is True
        assert rck._enable_checkpoint_early_stop is False
    assert rck._enable_checkpoint_early_stop is None
    with pytest.raises(ZeroDivisionError), rck.set_checkpoint_debug_enabled(True):
        assert rck._checkpoint_debug_enabled is True
        1 / 0  # noqa: B018
    assert rck._checkpoint_debug_enabled is None


def test_device_states_are_empty_for_the_single_generator():
    assert rck.get_device_states(rg.ones(2), [rg.ones(1)]) == ([], [])
    assert rck.set_device_states([], []) is None
    assert rck.DefaultDeviceType.get_device_type() == "cpu"


# -- selective activation checkpointing --------------------------------------------------------
def test_checkpoint_policy_is_torch_s_enum():
    assert [(p.name, p.value) for p in rck.CheckpointPolicy] == [(p.name, p.value) for p in tck.CheckpointPolicy]
    ctx = rck.SelectiveCheckpointContext(is_recompute=False, op_output=3)
    assert (ctx.is_recompute, ctx.op_output) == (False, 3)


def test_selective_checkpointing_validates_its_argument_as_torch():
    def make(ck_module):
        return [outcome(lambda: ck_module.create_selective_checkpoint_contexts(2)),
                outcome(lambda: ck_module.create_selective_checkpoint_contexts([2]))]
    assert make(rck) == make(tck) == [
        ("TypeError", "policy_fn_or_list must be either a function or a list of ops."),
        ("ValueError", "Expected op in `op_list` to be an OpOverload but got: 2 of type <class 'int'>.")]


def test_selective_checkpointing_takes_op_names_not_functions_in_its_list():
    for ck_module in (rck, tck):
        lib = _lib(ck_module)
        with pytest.raises(ValueError, match="^Expected op in `op_list` to be an OpOverload but got: "):
            ck_module.create_selective_checkpoint_contexts([lib.mm, lib.sin])
        forward, recompute = ck_module.create_selective_checkpoint_contexts([lib.ops.aten.mm.default])
        assert hasattr(forward, "__enter__") and hasattr(recompute, "__exit__")


# -- docstrings ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", [n for n in rck.__all__ if "Example::" in (getattr(rck, n).__doc__ or "")])
def test_docstring_example_runs(name):
    doc = inspect.cleandoc(getattr(rck, name).__doc__)
    test = doctest.DocTestParser().get_doctest(doc.split("Example::", 1)[1], {}, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    report = []
    runner.run(test, out=report.append)
    assert test.examples and runner.failures == 0, "".join(report)


def test_public_functions_have_a_one_line_summary():
    for name in rck.__all__:
        if not callable(getattr(rck, name)):
            continue
        doc = inspect.getdoc(getattr(rck, name))
        assert doc and doc.splitlines()[0].endswith("."), name
