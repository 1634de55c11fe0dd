"""MNIST CNN with the bits and pieces training scripts use around the model: seeds and
backend flags, init via apply, buffers, hooks, parameter groups and manual lr changes,
schedulers, checkpoints of model and optimizer, no_grad as a decorator, inference_mode,
type checks and NumPy round trips (after pytorch/examples/mnist and common tutorials)."""
import argparse
import gzip
import io
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import ExponentialLR, LambdaLR, ReduceLROnPlateau
from torch.utils.data import DataLoader, TensorDataset


def load_mnist(root, n):
    with gzip.open(os.path.join(root, 't10k-images-idx3-ubyte.gz'), 'rb') as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 28, 28)[:n]
    with gzip.open(os.path.join(root, 't10k-labels-idx1-ubyte.gz'), 'rb') as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)[:n]
    x = torch.from_numpy(images.copy()).float().div(255).sub(0.1307).div(0.3081).unsqueeze(1)
    return TensorDataset(x, torch.from_numpy(labels.astype(np.int64)))


class Net(nn.Module):
    def __init__(self, dropout=0.25):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout1 = nn.Dropout(dropout)
        self.fc1 = nn.Linear(16 * 12 * 12, 32)
        self.fc2 = nn.Linear(32, 10)
        self.register_buffer('steps', torch.zeros((), dtype=torch.long))

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        if self.training:
            self.steps += 1
        return F.log_softmax(self.fc2(x), dim=1)


def init_weights(m):
    if isinstance(m, nn.Conv2d):
        nn.init.kaiming_normal_(m.weight, mode='fan_out', nonlinearity='relu')
        nn.init.constant_(m.bias, 0)
    elif isinstance(m, nn.BatchNorm2d):
        nn.init.ones_(m.weight)
        nn.init.zeros_(m.bias)
    elif isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)
        m.bias.data.fill_(0.01)


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    loss, correct = 0.0, 0
    for data, target in loader:
        output = model(data)
        loss += F.nll_loss(output, target, reduction='sum').item()
        pred = output.argmax(dim=1, keepdim=True)
        correct += pred.eq(target.view_as(pred)).sum().item()
    assert not torch.is_grad_enabled()
    return loss / len(loader.dataset), correct / len(loader.dataset)


def main():
    parser = argparse.ArgumentParser(description='PyTorch MNIST Example')
    parser.add_argument('--batch-size', type=int, default=32)
    parser.add_argument('--epochs', type=int, default=2)
    parser.add_argument('--lr', type=float, default=0.05)
    parser.add_argument('--gamma', type=float, default=0.7)
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--data', type=str, default='../shared/data/mnist')
    parser.add_argument('--n', type=int, default=384)
    parser.add_argument('--dropout', type=float, default=0.25)
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    use_cuda = torch.cuda.is_available()
    device = torch.device("cuda" if use_cuda else "cpu")
    print('device', device, 'default dtype', torch.get_default_dtype())

    dataset = load_mnist(args.data, args.n)
    train_ds = torch.utils.data.Subset(dataset, range(0, args.n - 128))
    test_ds = torch.utils.data.Subset(dataset, range(args.n - 128, args.n))
    train_loader = DataLoader(train_ds, batch_size=args.batch_size)
    test_loader = DataLoader(test_ds, batch_size=64)

    model = Net(args.dropout).to(device)
    model.apply(init_weights)
    if args.init:
        if os.path.exists(args.init):
            missing, unexpected = model.load_state_dict(torch.load(args.init), strict=False)
            assert not missing and not unexpected
        else:
            torch.save(model.state_dict(), args.init)

    # introspection
    names = [n for n, _ in model.named_parameters()]
    assert names[:2] == ['conv1.weight', 'conv1.bias'] and 'steps' not in names
    assert [n for n, _ in model.named_buffers()] == ['steps', 'bn1.running_mean', 'bn1.running_var',
                                                    'bn1.num_batches_tracked']
    assert [type(c).__name__ for c in model.children()][:3] == ['Conv2d', 'BatchNorm2d', 'Conv2d']
    assert len(list(model.modules())) == 7
    n_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print('parameters', n_params)
    assert isinstance(model.fc1.weight, torch.Tensor) and isinstance(model.fc1.weight, nn.Parameter)
    assert torch.is_tensor(model.steps) and not torch.is_tensor(np.zeros(1))
    assert model.conv1.weight.dtype == torch.float32 and model.conv1.weight.is_floating_point()
    assert list(model.state_dict().keys())[0] == 'steps'

    activations = {}

    def hook(module, inp, out):
        activations['fc1'] = out.detach()
    handle = model.fc1.register_forward_hook(hook)

    # two parameter groups: no weight decay on biases and norms
    decay = [p for n, p in model.named_parameters() if p.ndim > 1]
    no_decay = [p for n, p in model.named_parameters() if p.ndim <= 1]
    optimizer = optim.SGD([{'params': decay, 'weight_decay': 1e-4},
                           {'params': no_decay, 'weight_decay': 0.0}], lr=args.lr, momentum=0.9)
    scheduler = ExponentialLR(optimizer, gamma=args.gamma)
    warmup = LambdaLR(optimizer, lr_lambda=lambda step: 1.0)
    plateau = ReduceLROnPlateau(optimizer, mode='min', factor=0.5, patience=0)

    for epoch in range(1, args.epochs + 1):
        model.train()
        for batch_idx, (data, target) in enumerate(train_loader):
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            output = model(data)
            loss = F.nll_loss(output, target)
            loss.backward()
            nn.utils.clip_grad_value_(model.parameters(), 1.0)
            optimizer.step()
            if batch_idx % 2 == 0:
                print('Train Epoch: {} [{}/{}]\tLoss: {:.6f}'.format(
                    epoch, batch_idx * len(data), len(train_loader.dataset), loss.item()))
        assert activations['fc1'].shape == (len(data), 32)
        test_loss, acc = evaluate(model, test_loader)
        print('Test set: Average loss: {:.4f}, Accuracy: {:.4f}'.format(test_loss, acc))
        scheduler.step()
        warmup.step()
        plateau.step(test_loss)
        for param_group in optimizer.param_groups:
            param_group['lr'] = param_group['lr'] * 0.9
        print('lr', ['{:.6f}'.format(g['lr']) for g in optimizer.param_groups])
    handle.remove()
    assert model.steps.item() == args.epochs * len(train_loader)

    # checkpoint of model, optimizer and scheduler through a buffer, and resume
    buf = io.BytesIO()
    torch.save({'epoch': args.epochs, 'model_state_dict': model.state_dict(),
                'optimizer_state_dict': optimizer.state_dict(),
                'scheduler': scheduler.state_dict(), 'loss': test_loss}, buf)
    buf.seek(0)
    checkpoint = torch.load(buf, map_location=device)
    model2 = Net()
    model2.load_state_dict(checkpoint['model_state_dict'])
    optimizer2 = optim.SGD([{'params': [p for p in model2.parameters() if p.ndim > 1]},
                            {'params': [p for p in model2.parameters() if p.ndim <= 1]}],
                           lr=args.lr, momentum=0.9)
    optimizer2.load_state_dict(checkpoint['optimizer_state_dict'])
    assert optimizer2.param_groups[0]['weight_decay'] == 1e-4
    assert checkpoint['epoch'] == args.epochs
    assert abs(evaluate(model2, test_loader)[0] - test_loss) < 1e-4

    with torch.inference_mode():
        x = test_ds[0][0].unsqueeze(0)
        probs = model(x).exp()
        assert torch.is_inference_mode_enabled() and not probs.requires_grad
    top = probs.topk(3)
    print('top-3 classes', top.indices.tolist()[0], 'probs sum {:.4f}'.format(probs.sum().item()))
    arr = probs.numpy()
    assert arr.shape == (1, 10) and isinstance(probs.tolist()[0][0], float)
    with torch.set_grad_enabled(False):
        y = model.fc2(torch.ones(1, 32))
        assert y.grad_fn is None
    print(torch.round(probs[0, :3] * 1000) / 1000)


if __name__ == '__main__':
    main()
