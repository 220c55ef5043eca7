"""rg.cuda, rg.backends.cudnn/mps, the thread counts and rg.amp: a training script's device set-up runs unchanged.

Compared with a CPU build of PyTorch, which is what this machine has: no GPU (tests of a real GPU
live in tests/test_cuda.py and skip without one).
"""
import warnings

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

needs_no_gpu = pytest.mark.skipif(rg.cuda.is_available() or torch.cuda.is_available(),
                                  reason="compares the answers of a machine without a GPU")


@needs_no_gpu
def test_cuda_queries_answer_as_a_cpu_build_of_pytorch():
    assert rg.cuda.is_available() is torch.cuda.is_available() is False
    assert rg.cuda.device_count() == torch.cuda.device_count() == 0
    assert rg.cuda.is_initialized() is False and rg.cuda.is_bf16_supported() is False
    assert rg.cuda.memory_allocated() == torch.cuda.memory_allocated() == 0
    rg.cuda.manual_seed(0)  # silently ignored without CUDA, as PyTorch's
    rg.cuda.manual_seed_all(0)
    rg.cuda.empty_cache()
    with rg.cuda.device(0):
        pass
    assert rg.zeros(2).is_cuda is torch.zeros(2).is_cuda is False


@needs_no_gpu
@pytest.mark.parametrize("call", ["synchronize", "current_device", "get_device_name", "get_device_capability"])
def test_cuda_calls_that_need_a_gpu_raise_pytorchs_assertion(call):
    with pytest.raises(AssertionError) as theirs:
        getattr(torch.cuda, call)()
    with pytest.raises(AssertionError) as ours:
        getattr(rg.cuda, call)()
    assert str(ours.value).startswith(str(theirs.value))


def test_cudnn_and_mps_switches_have_pytorchs_defaults_and_hold_what_is_set():
    for flag in ("benchmark", "deterministic", "enabled", "allow_tf32"):
        assert getattr(rg.backends.cudnn, flag) == getattr(torch.backends.cudnn, flag), flag
    assert rg.backends.cudnn.is_available() is False
    assert rg.backends.mps.is_available() is torch.backends.mps.is_available() is False
    assert rg.backends.mps.is_built() is False
    rg.backends.cudnn.benchmark = True
    try:
        assert rg.backends.cudnn.benchmark is True
    finally:
        rg.backends.cudnn.benchmark = False


def test_set_num_threads_sets_the_blas_threads_and_rejects_what_pytorch_rejects():
    before = rg.get_num_threads()
    try:
        rg.set_num_threads(1)
        assert rg.get_num_threads() == 1
        a = rg.randn(64, 64)
        np.testing.assert_allclose((a @ a).numpy(), a.numpy() @ a.numpy(), rtol=1e-5)
    finally:
        rg.set_num_threads(before)
    assert rg.get_num_threads() == before
    for bad in (0, -2, 1.5, True):
        with pytest.raises(RuntimeError) as theirs:
            torch.set_num_threads(bad)
        with pytest.raises(RuntimeError) as ours:
            rg.set_num_threads(bad)
        assert str(ours.value) == str(theirs.value)
        with pytest.raises(RuntimeError) as theirs:
            torch.set_num_interop_threads(bad)
        with pytest.raises(RuntimeError) as ours:
            rg.set_num_interop_threads(bad)
        assert str(ours.value) == str(theirs.value)
    assert rg.get_num_interop_threads() >= 1


def test_autocast_nests_and_casts_matmul_to_bfloat16_as_pytorch():
    x = rg.randn(3, 3)
    with rg.autocast("cpu"):
        assert rg.amp.is_autocast_enabled("cpu") and not rg.amp.is_autocast_enabled()
        with rg.autocast("cpu", enabled=False):
            assert not rg.amp.is_autocast_enabled("cpu")
            assert (x @ x).dtype is rg.float32
        y = x @ x
        assert rg.amp.is_autocast_enabled("cpu")
    assert not rg.amp.is_autocast_enabled("cpu")
    assert y.dtype is rg.bfloat16  # See Note [CPU autocast] (tests/test_amp_autocast.py holds it against PyTorch)
    np.testing.assert_array_equal(y.float().numpy(), (x.bfloat16() @ x.bfloat16()).float().numpy())

    @rg.amp.autocast("cpu")
    def f(a):
        return rg.amp.is_autocast_enabled("cpu"), a * 2
    assert f(x)[0] and f(x)[1].dtype is rg.float32  # mul is in no list
    assert rg.amp.is_autocast_available("cpu") and rg.amp.is_autocast_available("cuda")
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        rg.autocast("foo")


@needs_no_gpu
def test_cuda_autocast_and_scaler_warn_and_disable_themselves_without_a_gpu():
    for ours_cls, theirs_cls in ((rg.autocast, torch.autocast), (rg.amp.GradScaler, torch.amp.GradScaler)):
        with warnings.catch_warnings(record=True) as theirs:
            warnings.simplefilter("always")
            theirs_obj = theirs_cls("cuda")
        with warnings.catch_warnings(record=True) as ours:
            warnings.simplefilter("always")
            ours_obj = ours_cls("cuda")
        assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]
        if ours_cls is rg.amp.GradScaler:
            assert ours_obj.is_enabled() is theirs_obj.is_enabled() is False
            assert ours_obj.get_scale() == theirs_obj.get_scale() == 1.0
    with pytest.warns(FutureWarning, match=r"`torch.cuda.amp.GradScaler\(args...\)` is deprecated"):
        import retrograd.cuda.amp
        retrograd.cuda.amp.GradScaler()


def _train_with_scaler(lib, grads_blow_up_at):
    """Eight scaled steps of SGD on a quadratic, with an infinite gradient at some steps."""
    p = lib.nn.Parameter(lib.tensor([1.0, -2.0, 3.0]))
    opt = lib.optim.SGD([p], lr=0.05)
    scaler = lib.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
    trace = []
    for step in range(8):
        opt.zero_grad()
        loss = (p * p).sum() * (float("inf") if step in grads_blow_up_at else 1.0)
        scaler.scale(loss).backward()
        if step % 3 == 0:
            scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
        trace.append((scaler.get_scale(), p.detach().numpy().copy()))
    return trace, scaler.state_dict()


def test_grad_scaler_follows_pytorchs_scale_and_parameters_step_by_step():
    ours, our_state = _train_with_scaler(rg, grads_blow_up_at={2, 3})
    theirs, their_state = _train_with_scaler(torch, grads_blow_up_at={2, 3})
    for (our_scale, our_p), (their_scale, their_p) in zip(ours, theirs, strict=True):
        assert our_scale == their_scale
        np.testing.assert_allclose(our_p, their_p, rtol=1e-6)
    assert our_state == their_state


def test_grad_scaler_refuses_what_pytorch_refuses():
    def errors(lib):
        p = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([p], lr=0.1)
        scaler = lib.amp.GradScaler("cpu")
        got = []
        for attempt in (lambda: scaler.update(), lambda: lib.amp.GradScaler("cpu").load_state_dict({})):
            try:
                attempt()
            except (RuntimeError, AssertionError) as exc:
                got.append((type(exc), str(exc)))
        scaler.scale((p * 2).sum()).backward()
        scaler.unscale_(opt)
        for attempt in (lambda: scaler.unscale_(opt), lambda: scaler.step(opt, closure=lambda: 0)):
            try:
                attempt()
            except RuntimeError as exc:
                got.append((type(exc), str(exc)))
        scaler.step(opt)
        try:
            scaler.step(opt)
        except RuntimeError as exc:
            got.append((type(exc), str(exc)))
        return got
    assert errors(rg) == errors(torch)
    disabled = rg.amp.GradScaler("cpu", enabled=False)
    t = rg.ones(2)
    assert disabled.scale(t) is t and disabled.state_dict() == {}


# -- the legacy Tensor constructor and range indices, as a PyTorch script uses them ---------------
_LEGACY = ["Tensor()", "Tensor(2, 3)", "Tensor(Size([2, 3]))", "Tensor([1, 2])", "Tensor([[1.5, 2], [3, 4]])",
           "Tensor(np.array([1, 2]))", "Tensor(ones(2, dtype=int64))", "Tensor(0)"]


@pytest.mark.parametrize("call", _LEGACY)
def test_legacy_tensor_constructor_makes_what_torch_makes(call):
    torch = pytest.importorskip("torch")
    made = {}
    for lib in (rg, torch):
        env = {"Tensor": lib.Tensor, "Size": lib.Size, "ones": lib.ones, "int64": lib.int64, "np": np}
        made[lib.__name__] = eval(call, env)  # noqa: S307 - the calls above
    ours, theirs = made["retrograd"], made["torch"]
    assert (str(ours.dtype).split(".")[1], tuple(ours.shape)) == (str(theirs.dtype).split(".")[1], tuple(theirs.shape))
    if "2, 3" not in call:  # sizes: uninitialised
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("call", ["Tensor(3.5)", "Tensor(2, 3.0)", "Tensor(-1)", "Tensor(2, None)"])
def test_legacy_tensor_constructor_errors_match_torch(call):
    torch = pytest.importorskip("torch")
    errors = []
    for lib in (rg, torch):
        with pytest.raises((TypeError, RuntimeError)) as info:
            eval(call, {"Tensor": lib.Tensor})  # noqa: S307 - the calls above
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1]


def test_legacy_tensor_of_a_tensor_is_an_alias():
    x = rg.ones(2)
    y = rg.Tensor(x)
    y.add_(1)
    assert x.tolist() == [2.0, 2.0] and y is not x and x._version == 1


def test_parameter_of_an_uninitialised_legacy_tensor():
    w = rg.nn.Parameter(rg.Tensor(3, 4))
    rg.nn.init.kaiming_uniform_(w)
    assert w.shape == (3, 4) and w.dtype == rg.float32 and w.requires_grad


@pytest.mark.parametrize("index", [range(2, 8, 2), range(0), range(3)])
def test_range_index_is_a_sequence_index_as_in_torch(index):
    torch = pytest.importorskip("torch")
    x = rg.arange(10.0, requires_grad=True)
    y = x[index]
    np.testing.assert_array_equal(y.detach().numpy(), torch.arange(10.0)[index].numpy())
    y.sum().backward()
    expected = np.zeros(10)
    expected[list(index)] = 1
    np.testing.assert_array_equal(x.grad.numpy(), expected)
