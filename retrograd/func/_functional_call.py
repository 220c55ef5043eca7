"""``functional_call`` (a Module run with given parameters and buffers) and ``stack_module_state``."""
from __future__ import annotations

from ..ops.joining import stack

__all__ = ["functional_call", "stack_module_state"]

_MISSING = object()


def _owner(module, name):
    """The submodule holding dotted ``name``, and the last part of it."""
    *path, attr = name.split(".")
    for p in path:
        module = getattr(module, p)
    return module, attr


def _tied_names(module):
    """{name: [every name of the same tensor]} for parameters and buffers registered under several names."""
    by_id = {}
    for name, t in module.named_parameters(remove_duplicate=False):
        by_id.setdefault(id(t), []).append(name)
    for name, t in module.named_buffers(remove_duplicate=False):
        by_id.setdefault(id(t), []).append(name)
    return {n: names for names in by_id.values() if len(names) > 1 for n in names}


def _swap(module, name, value):
    """Puts ``value`` in place of ``name`` (a parameter, buffer or plain attribute); returns how to undo it."""
    owner, attr = _owner(module, name)
    for store in ("_parameters", "_buffers"):
        d = owner.__dict__.get(store)
        if d is not None and attr in d:
            old = d[attr]
            d[attr] = value
            return lambda d=d, attr=attr, old=old: d.__setitem__(attr, old)
    old = owner.__dict__.get(attr, _MISSING)
    owner.__dict__[attr] = value

    def undo(owner=owner, attr=attr, old=old):
        if old is _MISSING:
            owner.__dict__.pop(attr, None)
        else:
            owner.__dict__[attr] = old
    return undo


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """Calls ``module`` with its parameters and buffers replaced by the given tensors, restored afterwards.

    As ``torch.func.functional_call``: with ``vmap`` and ``grad`` it differentiates or maps a
    Module over its parameters (``vmap(functional_call, in_dims=(0, None))`` over stacked states).

    Args:
        module (nn.Module): the module.
        parameter_and_buffer_dicts (dict or sequence of dicts): name -> tensor (dotted names, as
            ``named_parameters``); several dicts must not share a name.
        args: the positional arguments (a tuple; anything else is the single argument).
        kwargs (dict, optional): the keyword arguments.
        tie_weights (bool): a tensor registered under several names (tied weights) is replaced
            under all of them when one of its names is given.
        strict (bool): the given names must be exactly the module's parameters and buffers.

    Returns:
        What the module returns.

    Raises:
        ValueError: a name in several dicts, or different values for tied names.
        RuntimeError: with ``strict``, missing or unexpected names.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.func import functional_call
        >>> m = rg.nn.Linear(2, 1)
        >>> functional_call(m, {"weight": rg.ones(1, 2), "bias": rg.zeros(1)}, (rg.tensor([[1., 2.]]),))
        tensor([[3.]])
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        values = dict(parameter_and_buffer_dicts)
    else:
        values = {}
        seen = set()
        repeated = []
        for d in parameter_and_buffer_dicts:
            for k in d:
                if k in seen and k not in repeated:
                    repeated.append(k)
                seen.add(k)
            values.update(d)
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
    if tie_weights:
        tied = _tied_names(module)
        for name in list(values):
            group = tied.get(name)
            if not group:
                continue
            given = [n for n in group if n in values]
            if any(values[n] is not values[given[0]] for n in given[1:]):
                raise ValueError(f"functional_call got multiple values for keys {given}, which are tied. Consider "
                                 f"using tie_weights=False")
            for n in group:
                values.setdefault(n, values[name])
    if strict:
        expected = [n for n, _ in module.named_parameters(remove_duplicate=not tie_weights)]
        expected += [n for n, _ in module.named_buffers(remove_duplicate=not tie_weights)]
        missing = [n for n in expected if n not in values]
        unexpected = [n for n in values if n not in expected]
        if missing or unexpected:
            lines = []
            if missing:
                lines.append("Missing key(s): " + ", ".join(repr(n) for n in missing) + ".")
            if unexpected:
                lines.append("Unexpected key(s): " + ", ".join(repr(n) for n in unexpected) + ".")
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t" + "\n\t".join(lines))
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    undo = []
    try:
        for name, value in values.items():
            undo.append(_swap(module, name, value))
        return module(*args, **(kwargs or {}))
    finally:
        for u in reversed(undo):
            u()


def stack_module_state(models):
    """The parameters and buffers of ``models`` (of one class and mode), each stacked along a new first dim.

    For ``vmap`` over an ensemble with ``functional_call``. The stacked parameters are new leaves
    that require grad as the models' do; the buffers are stacked as they are.

    Args:
        models (sequence of nn.Module): the models.

    Returns:
        ``(params, buffers)``: two dicts, name -> stacked tensor.

    Raises:
        RuntimeError: no models, or models of different classes or training modes.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.func import stack_module_state
        >>> params, buffers = stack_module_state([rg.nn.Linear(2, 3) for _ in range(4)])
        >>> params["weight"].shape
        retrograd.Size([4, 3, 2])
    """
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not all(m.training == models[0].training for m in models):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = {}
    for name, p in models[0].named_parameters():
        ps = [dict(m.named_parameters())[name] for m in models]
        params[name] = stack([q.detach() for q in ps]).requires_grad_(p.requires_grad)
    buffers = {}
    for name, _ in models[0].named_buffers():
        buffers[name] = stack([dict(m.named_buffers())[name] for m in models])
    return params, buffers

