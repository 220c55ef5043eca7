"""autograd.backward / autograd.grad arguments, and the error messages of API.md's "Errors" list."""
import warnings

import pytest

import retrograd as rg


# -- backward arguments -------------------------------------------------------------------------
def test_backward_of_scalar_seeds_ones():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    rg.autograd.backward((x * x).sum())
    assert x.grad.tolist() == [2.0, 4.0]


def test_backward_grad_tensors_weights_each_output():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    rg.autograd.backward([y, x * 3], grad_tensors=[rg.tensor([1.0, 10.0]), rg.tensor([1.0, 1.0])])
    assert x.grad.tolist() == [5.0, 43.0]
    x.grad = None
    (x * x).backward(gradient=rg.tensor([2.0, 0.0]))
    assert x.grad.tolist() == [4.0, 0.0]


def test_retain_graph_defaults_to_create_graph():
    x = rg.tensor([1.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(create_graph=True)
    y.backward()  # the graph was kept because create_graph=True
    assert x.grad.tolist() == [4.0]
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
        y.backward()


def test_retain_graph_false_with_create_graph_frees_the_graph():
    x = rg.tensor([1.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(create_graph=True, retain_graph=False)
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
        y.backward()


def test_backward_inputs_accumulates_only_into_them():
    x = rg.tensor([1.0], requires_grad=True)
    w = rg.tensor([2.0], requires_grad=True)
    (x * w).backward(inputs=[x])
    assert x.grad.tolist() == [2.0] and w.grad is None
    (x * w).backward(inputs=w)
    assert w.grad.tolist() == [1.0] and x.grad.tolist() == [2.0]


def test_backward_inputs_with_non_leaf_retains_its_grad():
    x = rg.tensor([1.0], requires_grad=True)
    mid = x * 3
    (mid * mid).backward(inputs=[mid])
    assert mid.grad.tolist() == [6.0] and x.grad is None


def test_backward_inputs_empty_raises():
    x = rg.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^`inputs` argument to `backward\(\)` cannot be empty."):
        (x * 2).backward(inputs=[])


def test_empty_inputs_messages_are_torchs():
    torch = pytest.importorskip("torch")
    messages = []
    for lib in (rg, torch):
        x = lib.ones(1, requires_grad=True)
        for call in (lambda: lib.autograd.grad(x * 2, []), lambda: (x * 2).sum().backward(inputs=[])):
            with pytest.raises(RuntimeError) as info:
                call()
            messages.append(str(info.value))
    assert messages[:2] == messages[2:]


# -- grad arguments -----------------------------------------------------------------------------
def test_grad_returns_a_tuple_and_leaves_grad_alone():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    w = rg.tensor([3.0, 4.0], requires_grad=True)
    gx, gw = rg.autograd.grad((x * w).sum(), [x, w])
    assert gx.tolist() == [3.0, 4.0] and gw.tolist() == [1.0, 2.0]
    assert x.grad is None and w.grad is None


def test_grad_outputs_weights_the_outputs():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    (g,) = rg.autograd.grad(x * x, x, grad_outputs=rg.tensor([1.0, -1.0]))
    assert g.tolist() == [2.0, -4.0]
    (g,) = rg.autograd.grad([(x * 2).sum(), x * 3], x, grad_outputs=[None, rg.ones(2)])  # None: ones
    assert g.tolist() == [5.0, 5.0]


def test_grad_retain_graph():
    x = rg.tensor([1.0], requires_grad=True)
    y = (x * x).sum()
    rg.autograd.grad(y, x, retain_graph=True)
    (g,) = rg.autograd.grad(y, x)
    assert g.tolist() == [2.0]
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
        rg.autograd.grad(y, x)


def test_grad_create_graph_gives_differentiable_results():
    x = rg.tensor([2.0], requires_grad=True)
    (g,) = rg.autograd.grad((x ** 3).sum(), x, create_graph=True)
    assert g.requires_grad and g.tolist() == [12.0]
    (gg,) = rg.autograd.grad(g.sum(), x)
    assert gg.tolist() == [12.0]


def test_grad_of_unused_input_raises():
    x = rg.tensor([1.0], requires_grad=True)
    unused = rg.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^The differentiated Tensor at index 1 appears to not have been "
                                           r"used in the graph. Set allow_unused=True if this is the desired "
                                           r"behavior."):
        rg.autograd.grad((x * 2).sum(), [x, unused])


def test_grad_of_input_used_elsewhere_but_not_reached_raises():
    x = rg.tensor([1.0], requires_grad=True)
    other = rg.tensor([1.0], requires_grad=True)
    _ = other * 2  # other has an AccumulateGrad, but not in this graph
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        rg.autograd.grad((x * 2).sum(), other)


def test_grad_allow_unused_returns_none():
    x = rg.tensor([1.0], requires_grad=True)
    unused = rg.tensor([1.0], requires_grad=True)
    gx, gu = rg.autograd.grad((x * 2).sum(), [x, unused], allow_unused=True)
    assert gx.tolist() == [2.0] and gu is None


def test_grad_materialize_grads_returns_zeros():
    x = rg.tensor([1.0], requires_grad=True)
    unused = rg.tensor([1.0, 1.0], requires_grad=True)
    gx, gu = rg.autograd.grad((x * 2).sum(), [x, unused], materialize_grads=True)
    assert gx.tolist() == [2.0] and gu.tolist() == [0.0, 0.0]


def test_grad_materialize_grads_with_allow_unused_false_raises():
    x = rg.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="^Expected allow_unused to be True or not passed when "
                                         "materialize_grads=True"):
        rg.autograd.grad((x * 2).sum(), x, allow_unused=False, materialize_grads=True)


def test_grad_with_input_not_requiring_grad_raises():
    x = rg.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="^One of the differentiated Tensors does not require grad"):
        rg.autograd.grad((x * 2).sum(), rg.tensor([1.0]))


def test_grad_only_inputs_false_warns():
    x = rg.tensor([1.0], requires_grad=True)
    with pytest.warns(UserWarning, match="^only_inputs argument is deprecated"):
        rg.autograd.grad((x * 2).sum(), x, only_inputs=False)


# -- the "Errors" list ----------------------------------------------------------------------------
def test_output_without_grad_raises():
    x = rg.tensor([1.0])
    with pytest.raises(RuntimeError, match="^element 0 of tensors does not require grad and does not have a "
                                           "grad_fn"):
        (x * 2).sum().backward()
    y = rg.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="^element 1 of tensors does not require grad and does not have a "
                                           "grad_fn"):
        rg.autograd.backward([y.sum(), x.sum()])


def test_implicit_grad_of_non_scalar_raises():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="^grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="^grad can be implicitly created only for scalar outputs"):
        rg.autograd.grad(x * 2, x)


def test_implicit_grad_of_one_element_non_scalar_is_allowed():
    x = rg.tensor([3.0], requires_grad=True)
    (x * 2).backward()
    assert x.grad.tolist() == [2.0]


def test_backward_a_second_time_message():
    x = rg.tensor([1.0], requires_grad=True)
    y = x.exp().sum()
    y.backward()
    with pytest.raises(RuntimeError) as info:
        y.backward()
    assert str(info.value).startswith(
        "Trying to backward through the graph a second time (or directly access saved tensors after they have "
        "already been freed).")
    assert "Specify retain_graph=True" in str(info.value)


def test_inplace_modified_saved_tensor_message():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1
    y = a * a
    a.add_(1)
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    assert str(info.value).startswith(
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        "[retrograd.FloatTensor [2]], which is output 0 of Add, is at version 1; expected version 0 "
        "instead.")


def test_custom_function_wrong_shape_gradient_message():
    class Wrong(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return rg.ones(2, 2)
    x = rg.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^Function WrongBackward returned an invalid gradient at index 0 - "
                                           r"got \[2, 2\] but expected shape compatible with \[3\]"):
        Wrong.apply(x).sum().backward()


def test_grad_output_shape_mismatch_raises():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^Mismatch in shape: grad_output\[0\] has a shape of "):
        (x * 2).backward(rg.ones(3))


def test_non_tensor_gradient_raises_type_error():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match="^gradients can be either Tensors or None, but got float"):
        (x * 2).sum().backward([1.0])


def test_deprecated_grad_variables_warns():
    x = rg.tensor([1.0], requires_grad=True)
    with pytest.warns(UserWarning, match="'grad_variables' is deprecated. Use 'grad_tensors' instead."):
        rg.autograd.backward(x * 2, grad_variables=[rg.ones(1)])
    assert x.grad.tolist() == [2.0]


def test_messages_match_pytorch():
    torch = pytest.importorskip("torch")

    def first_sentence(fn):
        with pytest.raises(RuntimeError) as info:
            fn()
        return str(info.value).split(". ")[0]

    def cases(lib):
        return [
            lambda: (lib.tensor([1.0]) * 2).sum().backward(),
            lambda: (lib.tensor([1.0, 2.0], requires_grad=True) * 2).backward(),
            lambda: lib.autograd.grad((lib.tensor([1.0], requires_grad=True) * 2).sum(),
                                      lib.tensor([1.0], requires_grad=True)),
            lambda: lib.tensor([1, 2]).requires_grad_(),
            lambda: lib.tensor([1.0], requires_grad=True).add_(1),
            lambda: lib.tensor([1.0], requires_grad=True).numpy(),
        ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for ours, theirs in zip(cases(rg), cases(torch), strict=True):
            assert first_sentence(ours) == first_sentence(theirs)
