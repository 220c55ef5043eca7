from ._forward import jvp, jacfwd, linearize, hessian  # noqa: F401 - forward-mode transforms
