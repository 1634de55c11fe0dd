#!/usr/bin/env python
"""Fine-tuning and knowledge distillation, the way training scripts do it around a "pretrained"
network: model.apply(init_fn), a teacher trained first, then a student whose backbone is frozen
with requires_grad_(False) and later unfrozen through optimizer.add_param_group with a smaller
lr; KLDivLoss(log_target=True) on temperature-softened logits plus feature distillation through
register_forward_hook, gradient norms recorded by register_full_backward_hook, an input check in
register_forward_pre_hook, torch.utils.checkpoint.checkpoint on a block, mixup, and
parameters_to_vector / vector_to_parameters for a weight-space average."""
import argparse
import copy
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                          nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class Net(nn.Module):
    def __init__(self, width, n_classes=3, use_checkpoint=False):
        super().__init__()
        self.use_checkpoint = use_checkpoint
        self.stem = nn.Sequential(nn.Conv2d(1, width, 3, 1, 1, bias=False),
                                  nn.BatchNorm2d(width), nn.ReLU(inplace=True))
        self.layer1 = Block(width, width, 1)
        self.layer2 = Block(width, 2 * width, 2)
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(2 * width, n_classes)

    def forward(self, x):
        x = self.stem(x)
        if self.use_checkpoint and self.training:
            x = checkpoint(self.layer1, x, use_reentrant=False)
        else:
            x = self.layer1(x)
        x = self.layer2(x)
        return self.fc(torch.flatten(self.pool(x), 1))


def init_weights(m):
    if isinstance(m, nn.Conv2d):
        nn.init.kaiming_normal_(m.weight, mode='fan_out', nonlinearity='relu')
    elif isinstance(m, nn.BatchNorm2d):
        nn.init.constant_(m.weight, 1)
        nn.init.constant_(m.bias, 0)
    elif isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)
        nn.init.zeros_(m.bias)


def make_data(rng, n, size=12):
    """Three textures: horizontal stripes, vertical stripes, checkerboard, with noise."""
    yy, xx = np.mgrid[0:size, 0:size]
    y = rng.randint(0, 3, size=n)
    x = np.empty((n, 1, size, size), dtype=np.float32)
    for i, c in enumerate(y):
        period = rng.randint(2, 4)
        if c == 0:
            pat = (yy // period) % 2
        elif c == 1:
            pat = (xx // period) % 2
        else:
            pat = ((yy // period) + (xx // period)) % 2
        x[i, 0] = pat + 0.4 * rng.randn(size, size)
    return torch.from_numpy(x), torch.from_numpy(y).long()


def distillation_loss(student_logits, teacher_logits, labels, T=4.0, alpha=0.7):
    kl = nn.KLDivLoss(reduction='batchmean', log_target=True)
    soft = kl(F.log_softmax(student_logits / T, dim=1), F.log_softmax(teacher_logits / T, dim=1))
    return alpha * soft * T * T + (1 - alpha) * F.cross_entropy(student_logits, labels)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=3)
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    x_train, y_train = make_data(rng, 192)
    x_test, y_test = make_data(rng, 64)

    teacher = Net(8)
    teacher.apply(init_weights)
    student = Net(4, use_checkpoint=True)
    student.apply(init_weights)
    adapter = nn.Conv2d(8, 16, 1)  # student channels -> teacher channels, for the features
    if args.init:
        if os.path.exists(args.init):
            state = torch.load(args.init)
            teacher.load_state_dict(state['teacher'])
            student.load_state_dict(state['student'])
            adapter.load_state_dict(state['adapter'])
        else:
            torch.save({'teacher': teacher.state_dict(), 'student': student.state_dict(),
                        'adapter': adapter.state_dict()}, args.init)

    # 1. train the teacher with mixup
    opt = torch.optim.SGD(teacher.parameters(), lr=0.05, momentum=0.9, nesterov=True,
                          weight_decay=5e-4)
    for epoch in range(args.epochs):
        teacher.train()
        total = 0.0
        for b in range(0, len(x_train), 32):
            xb, yb = x_train[b:b + 32], y_train[b:b + 32]
            lam = float(rng.beta(0.4, 0.4))
            perm = torch.from_numpy(rng.permutation(len(xb)))
            mixed = lam * xb + (1 - lam) * xb[perm]
            out = teacher(mixed)
            loss = lam * F.cross_entropy(out, yb) + (1 - lam) * F.cross_entropy(out, yb[perm])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
        print('teacher epoch {} loss {:.5f}'.format(epoch, total / 6))
    teacher.eval()
    for p in teacher.parameters():
        p.requires_grad_(False)
    with torch.no_grad():
        acc = (teacher(x_test).argmax(1) == y_test).float().mean().item()
    print('teacher test acc {:.3f}'.format(acc))

    # 2. hooks: feature maps of both networks, gradient norms of the student's head
    features = {}

    def save_to(name):
        def hook(module, inputs, output):
            features[name] = output
        return hook

    grad_norms = []

    def record_grad(module, grad_input, grad_output):
        grad_norms.append(grad_output[0].norm().item())

    def check_input(module, inputs):
        assert inputs[0].dim() == 4, 'expected NCHW'

    handles = [teacher.layer2.register_forward_hook(save_to('teacher')),
               student.layer2.register_forward_hook(save_to('student')),
               student.fc.register_full_backward_hook(record_grad),
               student.register_forward_pre_hook(check_input)]

    # 3. distill into the student: head and adapter first, backbone frozen
    for name, p in student.named_parameters():
        if not name.startswith('fc.'):
            p.requires_grad_(False)
    trainable = [n for n, p in student.named_parameters() if p.requires_grad]
    print('trainable at first', trainable)
    optimizer = torch.optim.Adam([{'params': student.fc.parameters()},
                                  {'params': adapter.parameters()}], lr=5e-3)
    for epoch in range(args.epochs + 1):
        if epoch == 1:  # unfreeze the backbone with a smaller learning rate
            backbone = [p for n, p in student.named_parameters() if not n.startswith('fc.')]
            for p in backbone:
                p.requires_grad_(True)
            optimizer.add_param_group({'params': backbone, 'lr': 1e-3})
        student.train()
        total = 0.0
        for b in range(0, len(x_train), 32):
            xb, yb = x_train[b:b + 32], y_train[b:b + 32]
            with torch.no_grad():
                t_logits = teacher(xb)
            s_logits = student(xb)
            feat_loss = F.mse_loss(adapter(features['student']), features['teacher'])
            loss = distillation_loss(s_logits, t_logits, yb) + 0.1 * feat_loss
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_([p for g in optimizer.param_groups for p in g['params']],
                                     max_norm=2.0, foreach=True)
            optimizer.step()
            total += loss.item()
        student.eval()
        with torch.no_grad():
            acc = (student(x_test).argmax(1) == y_test).float().mean().item()
        print('student epoch {} groups {} distill loss {:.5f} head grad {:.5f} acc {:.3f}'.format(
            epoch, len(optimizer.param_groups), total / 6, grad_norms[-1], acc))
    for h in handles:
        h.remove()
    features.clear()
    student(x_test[:2])
    assert not features, 'hooks removed'

    # 4. weight-space average of the student and a copy nudged by one more epoch
    other = copy.deepcopy(student)
    opt2 = torch.optim.SGD(other.parameters(), lr=0.01)
    other.train()
    for b in range(0, len(x_train), 32):
        loss = F.cross_entropy(other(x_train[b:b + 32]), y_train[b:b + 32])
        opt2.zero_grad()
        loss.backward()
        opt2.step()
    vec = (nn.utils.parameters_to_vector(student.parameters())
           + nn.utils.parameters_to_vector(other.parameters())) / 2
    averaged = copy.deepcopy(student)
    nn.utils.vector_to_parameters(vec, averaged.parameters())
    averaged.eval()
    with torch.no_grad():
        logits = averaged(x_test)
        avg_loss = F.cross_entropy(logits, y_test).item()
        acc = (logits.argmax(1) == y_test).float().mean().item()
    print('averaged {} params loss {:.5f} acc {:.3f}'.format(vec.numel(), avg_loss, acc))


if __name__ == '__main__':
    main()
