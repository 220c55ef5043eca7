"""The RPC agent this process runs: set by ``rpc.init_rpc``, cleared by ``rpc.shutdown``.

It sits below both ``rpc`` and ``autograd`` of this package. ``rpc`` starts and stops the agent
and packs the tensors of its messages with distributed autograd; distributed autograd sends
gradients and context releases through the agent (see Note [Distributed autograd]). It lives
outside the ``rpc`` package so that distributed autograd can reach the agent without importing
``rpc``. The agent itself is ``rpc/_agent.py``'s (see Note [RPC over MPI]).
"""
from __future__ import annotations

__all__ = ["get_agent", "current_agent", "set_agent"]

_agent = None


def current_agent():
    """The running agent, or None before ``init_rpc`` and after ``shutdown``."""
    return _agent


def get_agent():
    """The running agent; RuntimeError if RPC has not been initialized."""
    if _agent is None:
        raise RuntimeError("RPC has not been initialized. Call retrograd.distributed.rpc.init_rpc first.")
    return _agent


def set_agent(agent) -> None:
    """Makes ``agent`` (or None) this process's agent."""
    global _agent
    _agent = agent
