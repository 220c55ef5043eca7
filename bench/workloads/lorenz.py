"""W16 lorenz: the Lorenz system integrated by RK4 on 0-d tensors, differentiated w.r.t. its parameters.

Scalar op-call overhead in its purest form: every op of the forward works on 0-d float64
tensors (about 70 ops a step), and the backward runs as many tiny nodes. The NumPy floor is
the same RK4 in Python floats with its reverse pass written out.
"""
import numpy as np

from ._base import Workload

W16 = Workload(
    "lorenz", "W16 lorenz",
    "float64 Lorenz system (sigma 10, rho 28, beta 8/3 as 0-d tensors requiring grad) from (1, 1, 1), `steps` RK4 "
    "steps of dt 0.01 on 0-d tensors, loss x^2 + y^2 + z^2 of the final state; backward to the 3 parameters",
    sizes={"full": {"steps": 500, "dt": 0.01}, "quick": {"steps": 5, "dt": 0.01}},
    unit="run", repeats=5, rtol=1e-7, atol=1e-9)

PARAMS = (10.0, 28.0, 8.0 / 3.0)


def _field(x, y, z, sigma, rho, beta):
    return sigma * (y - x), x * (rho - z) - y, x * y - beta * z


def _integrate(s, p, steps, dt):
    """RK4 written once for every framework: ``s`` the state triple, ``p`` the parameter triple."""
    for _ in range(steps):
        k1 = _field(*s, *p)
        k2 = _field(*(a + dt / 2 * k for a, k in zip(s, k1)), *p)
        k3 = _field(*(a + dt / 2 * k for a, k in zip(s, k2)), *p)
        k4 = _field(*(a + dt * k for a, k in zip(s, k3)), *p)
        s = tuple(a + dt / 6 * (q1 + 2 * q2 + 2 * q3 + q4) for a, q1, q2, q3, q4 in zip(s, k1, k2, k3, k4))
    x, y, z = s
    return x * x + y * y + z * z


def _lib_builder(name):
    def build(p):
        lib = __import__(name)
        params = [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in PARAMS]
        start = [lib.tensor(1.0, dtype=lib.float64) for _ in range(3)]

        def step():
            for t in params:
                t.grad = None
            _integrate(start, params, p["steps"], p["dt"]).backward()
            return lib.stack([t.grad for t in params])
        return step
    return build


W16.impl("retrograd")(_lib_builder("retrograd"))
W16.impl("torch")(_lib_builder("torch"))


@W16.impl("autograd")
def _autograd(p):
    import autograd
    g = autograd.grad(lambda params: _integrate((1.0, 1.0, 1.0), params, p["steps"], p["dt"]))

    def step():
        return np.array(g(tuple(np.float64(v) for v in PARAMS)))
    return step


def _vjp(x, y, z, sigma, rho, beta, a, b, c):
    """Cotangent (a, b, c) of the field at (x, y, z) pulled back: state part, then parameter part."""
    return ((rho - z) * b - sigma * a + y * c, sigma * a - b + x * c, -x * b - beta * c,
            (y - x) * a, x * b, -z * c)


@W16.impl("numpy")
def _numpy(p):
    steps, dt = p["steps"], p["dt"]
    sigma, rho, beta = PARAMS

    def step():
        x = y = z = 1.0
        stages = []
        for _ in range(steps):
            s0 = (x, y, z)
            k1 = _field(x, y, z, sigma, rho, beta)
            s1 = (x + dt / 2 * k1[0], y + dt / 2 * k1[1], z + dt / 2 * k1[2])
            k2 = _field(*s1, sigma, rho, beta)
            s2 = (x + dt / 2 * k2[0], y + dt / 2 * k2[1], z + dt / 2 * k2[2])
            k3 = _field(*s2, sigma, rho, beta)
            s3 = (x + dt * k3[0], y + dt * k3[1], z + dt * k3[2])
            k4 = _field(*s3, sigma, rho, beta)
            stages.append((s0, s1, s2, s3))
            x = x + dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
            y = y + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
            z = z + dt / 6 * (k1[2] + 2 * k2[2] + 2 * k3[2] + k4[2])
        gx, gy, gz = 2 * x, 2 * y, 2 * z
        gs = gr = gb = 0.0
        for s0, s1, s2, s3 in reversed(stages):
            # s' = s + dt/6 (k1 + 2 k2 + 2 k3 + k4), k_i = f(s_i), s_i = s + c_i k_(i-1): k4 back to k1.
            w = dt / 6
            ox, oy, oz = gx, gy, gz
            kb = (w * ox, w * oy, w * oz)
            for si, weight, c in ((s3, 2 * w, dt), (s2, 2 * w, dt / 2), (s1, w, dt / 2), (s0, None, None)):
                ax, ay, az, ps, pr, pb = _vjp(*si, sigma, rho, beta, *kb)
                gs, gr, gb = gs + ps, gr + pr, gb + pb
                if weight is not None:  # the previous k's cotangent: its own term in s', and through s_i
                    kb = (weight * ox + c * ax, weight * oy + c * ay, weight * oz + c * az)
                gx, gy, gz = gx + ax, gy + ay, gz + az
        return np.array([gs, gr, gb])
    return step


def _jax_builder(jit):
    def build(p):
        from .. import frameworks as fws
        jax, jnp = fws.import_jax()
        steps, dt = p["steps"], p["dt"]
        if jit:  # the same RK4 step under lax.fori_loop: unrolling 500 steps would make compiling take minutes
            def loss(params):
                def body(_, s):
                    k1 = _field(*s, *params)
                    k2 = _field(*(a + dt / 2 * k for a, k in zip(s, k1)), *params)
                    k3 = _field(*(a + dt / 2 * k for a, k in zip(s, k2)), *params)
                    k4 = _field(*(a + dt * k for a, k in zip(s, k3)), *params)
                    return tuple(a + dt / 6 * (q1 + 2 * q2 + 2 * q3 + q4)
                                 for a, q1, q2, q3, q4 in zip(s, k1, k2, k3, k4))
                x, y, z = jax.lax.fori_loop(0, steps, body, tuple(jnp.asarray(1.0) for _ in range(3)))
                return x * x + y * y + z * z
            g = jax.jit(jax.grad(loss))
        else:
            g = jax.grad(lambda params: _integrate(tuple(jnp.asarray(1.0) for _ in range(3)), params, steps, dt))
        params = tuple(jnp.asarray(v) for v in PARAMS)

        def step():
            return jnp.stack(jax.block_until_ready(g(params)))
        return step
    return build


W16.impl("jax")(_jax_builder(False))
W16.impl("jaxjit")(_jax_builder(True))
