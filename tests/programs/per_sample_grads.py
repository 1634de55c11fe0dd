"""Per-sample gradients and a model ensemble with torch.func (after the PyTorch tutorials
"Per-sample-gradients" and "Model ensembling"), on a CNN whose conv layer is written the old
way: nn.Parameter(torch.Tensor(...)), reset_parameters and torch.nn.modules.utils._pair; a
DP-SGD-style training loop clips each sample's gradient before averaging."""
import argparse
import math
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, stack_module_state, vmap
from torch.nn.modules.utils import _pair


class MyConv2d(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0):
        super(MyConv2d, self).__init__()
        self.kernel_size = _pair(kernel_size)
        self.stride = _pair(stride)
        self.padding = _pair(padding)
        self.weight = nn.Parameter(torch.Tensor(out_channels, in_channels, *self.kernel_size))
        self.bias = nn.Parameter(torch.Tensor(out_channels))
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        fan_in, _ = nn.init._calculate_fan_in_and_fan_out(self.weight)
        bound = 1 / math.sqrt(fan_in)
        nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, x):
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding)


class SimpleCNN(nn.Module):
    def __init__(self):
        super(SimpleCNN, self).__init__()
        self.conv1 = MyConv2d(1, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 8, 3, 2, 1)
        self.fc1 = nn.Linear(8 * 4 * 4, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(x, 2)
        x = F.relu(self.conv2(x))
        x = torch.flatten(x, 1)
        return F.log_softmax(self.fc1(x), dim=1)


@torch.jit.script
def clip_factor(norms: torch.Tensor, max_norm: float) -> torch.Tensor:
    return (max_norm / (norms + 1e-6)).clamp(max=1.0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--steps', type=int, default=6)
    parser.add_argument('--batch-size', type=int, default=8)
    parser.add_argument('--lr', type=float, default=0.5)
    parser.add_argument('--max-norm', type=float, default=1.0)
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    torch.manual_seed(0)

    rng = np.random.RandomState(0)
    images = torch.from_numpy(rng.rand(64, 1, 16, 16).astype(np.float32))
    labels = torch.from_numpy((images.numpy()[:, 0, :8].mean(axis=(1, 2)) * 20).astype(np.int64) % 10)

    model = SimpleCNN()
    if args.init:
        if os.path.exists(args.init):
            model.load_state_dict(torch.load(args.init))
        else:
            torch.save(model.state_dict(), args.init)
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        batch = sample.unsqueeze(0)
        targets = target.unsqueeze(0)
        predictions = functional_call(model, (params, buffers), (batch,))
        return F.nll_loss(predictions, targets)

    ft_compute_grad = grad(compute_loss)
    ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))

    # the per-sample gradients agree with a loop of ordinary backward passes
    data, target = images[:4], labels[:4]
    ft_grads = ft_compute_sample_grad(params, buffers, data, target)
    for i in range(4):
        model.zero_grad()
        F.nll_loss(model(data[i:i + 1]), target[i:i + 1]).backward()
        for name, p in model.named_parameters():
            assert torch.allclose(ft_grads[name][i], p.grad, atol=1e-5, rtol=1e-4), name
    print('per-sample gradients match the loop')

    for step in range(args.steps):
        lo = (step * args.batch_size) % len(images)
        x, y = images[lo:lo + args.batch_size], labels[lo:lo + args.batch_size]
        g = ft_compute_sample_grad(params, buffers, x, y)
        norms = torch.sqrt(sum((v.flatten(1) ** 2).sum(1) for v in g.values()))
        factor = clip_factor(norms, args.max_norm)
        with torch.no_grad():
            for name in params:
                clipped = g[name] * factor.view(-1, *([1] * (g[name].dim() - 1)))
                params[name] = params[name] - args.lr * clipped.mean(0)
        loss = F.nll_loss(functional_call(model, (params, buffers), (images,)), labels)
        print('step {} loss {:.6f} mean grad norm {:.6f}'.format(step, loss.item(), norms.mean().item()))

    # an ensemble of three copies of the model, perturbed, evaluated in one vmap
    models = [SimpleCNN() for _ in range(3)]
    for k, m in enumerate(models):
        m.load_state_dict({n: p + 0.01 * k for n, p in params.items()})
    ens_params, ens_buffers = stack_module_state(models)
    base = models[0]

    def fmodel(p, b, x):
        return functional_call(base, (p, b), (x,))
    preds = vmap(fmodel, in_dims=(0, 0, None))(ens_params, ens_buffers, images[:8])
    assert preds.shape == (3, 8, 10)
    for k in range(3):
        assert torch.allclose(preds[k], models[k](images[:8]), atol=1e-5)
    print('ensemble loss {:.6f}'.format(F.nll_loss(preds.mean(0), labels[:8]).item()))


if __name__ == '__main__':
    main()
