"""Custom autograd Functions (after the PyTorch tutorials "Defining new autograd functions"
and "Extending PyTorch"), checked with torch.autograd.gradcheck and used to fit a polynomial."""
import math

import torch
from torch.autograd import Function, gradcheck, gradgradcheck


class LegendrePolynomial3(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)


class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


class MulConstant(Function):
    @staticmethod
    def forward(tensor, constant):
        return tensor * constant

    @staticmethod
    def setup_context(ctx, inputs, output):
        tensor, constant = inputs
        ctx.constant = constant

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.constant, None


class MyLinear(torch.nn.Module):
    def __init__(self, input_features, output_features, bias=True):
        super().__init__()
        self.input_features = input_features
        self.output_features = output_features
        self.weight = torch.nn.Parameter(torch.empty(output_features, input_features))
        if bias:
            self.bias = torch.nn.Parameter(torch.empty(output_features))
        else:
            self.register_parameter('bias', None)
        self.weight.data.uniform_(-0.1, 0.1)
        if self.bias is not None:
            self.bias.data.uniform_(-0.1, 0.1)

    def forward(self, input):
        return LinearFunction.apply(input, self.weight, self.bias)

    def extra_repr(self):
        return 'input_features={}, output_features={}, bias={}'.format(
            self.input_features, self.output_features, self.bias is not None)


def main():
    torch.manual_seed(0)
    dtype = torch.float
    device = torch.device("cpu")

    input = (torch.randn(6, 5, dtype=torch.double, requires_grad=True),
             torch.randn(3, 5, dtype=torch.double, requires_grad=True),
             torch.randn(3, dtype=torch.double, requires_grad=True))
    test = gradcheck(LinearFunction.apply, input, eps=1e-6, atol=1e-4)
    print('gradcheck LinearFunction:', test)
    x = torch.randn(7, dtype=torch.double, requires_grad=True)
    print('gradcheck Legendre:', gradcheck(LegendrePolynomial3.apply, (x,)))
    print('gradcheck MulConstant:', gradcheck(lambda t: MulConstant.apply(t, 2.5), (x,)))
    print('gradgradcheck exp*sin:', gradgradcheck(lambda t: (t.exp() * t.sin()).sum(), (x,)))
    print(MyLinear(5, 3))

    x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
    y = torch.sin(x)
    a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
    c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)

    learning_rate = 5e-6
    for t in range(400):
        P3 = LegendrePolynomial3.apply
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        if t % 100 == 99:
            print(t, 'loss', loss.item())
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    print(f'Result: y = {a.item()} + {b.item()} * P3({c.item()} + {d.item()} x)')

    layer = MyLinear(5, 3)
    with torch.no_grad():
        layer.weight.copy_(torch.arange(15.).view(3, 5) / 15)
        layer.bias.fill_(0.5)
    inp = torch.arange(10.).view(2, 5) / 10
    out = layer(inp)
    out.sum().backward()
    print('MyLinear loss', out.sum().item(), 'grad', layer.weight.grad.sum().item())
    ref = torch.nn.functional.linear(inp, layer.weight, layer.bias)
    assert torch.allclose(out, ref)


if __name__ == '__main__':
    main()
