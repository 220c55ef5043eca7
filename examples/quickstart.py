"""A first look at retrograd: gradients, higher derivatives and a custom Function."""
import retrograd as rg

x = rg.tensor([0.5, -1.0, 2.0], requires_grad=True)
w = rg.tensor([[1.0, 2.0, 3.0], [0.5, -0.5, 0.25]], requires_grad=True)

loss = (w @ x).tanh().sum()
loss.backward()
print("loss        ", loss)
print("d loss / dx ", x.grad)
print("d loss / dw ", w.grad)

# Higher derivatives: d^3/dt^3 of t^4 at t = 2 is 24 * 2 = 48.
t = rg.tensor(2.0, requires_grad=True)
(g1,) = rg.autograd.grad(t ** 4, t, create_graph=True)
(g2,) = rg.autograd.grad(g1, t, create_graph=True)
(g3,) = rg.autograd.grad(g2, t)
print("derivatives of t^4 at 2:", g1.item(), g2.item(), g3.item())


class Cube(rg.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a * a

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * 3 * a * a


y = rg.tensor([1.0, 2.0], requires_grad=True)
Cube.apply(y).sum().backward()
print("custom Function gradient", y.grad, "graph node", Cube.apply(y).grad_fn.name())
