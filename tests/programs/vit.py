#!/usr/bin/env python
"""A small vision transformer on synthetic images: Conv2d patch embedding, a CLS token,
learned position embeddings, nn.MultiheadAttention blocks, AdamW with a linear-warmup cosine
schedule through LambdaLR, label smoothing, and OneCycleLR for a fine-tuning phase."""
import argparse
import math
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class PatchEmbed(nn.Module):
    def __init__(self, img_size=16, patch_size=4, in_chans=3, embed_dim=32):
        super().__init__()
        self.num_patches = (img_size // patch_size) ** 2
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)

    def forward(self, x):
        x = self.proj(x)  # B, C, H/p, W/p
        return x.flatten(2).transpose(1, 2)


class UnfoldPatchEmbed(nn.Module):
    """The same patch embedding written with F.unfold and a Linear layer."""

    def __init__(self, img_size=16, patch_size=4, in_chans=3, embed_dim=32):
        super().__init__()
        self.patch_size = patch_size
        self.num_patches = (img_size // patch_size) ** 2
        self.proj = nn.Linear(in_chans * patch_size * patch_size, embed_dim)

    def forward(self, x):
        patches = F.unfold(x, kernel_size=self.patch_size, stride=self.patch_size)
        return self.proj(patches.transpose(1, 2))


class Block(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio=2.0, drop=0.0):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = nn.MultiheadAttention(dim, num_heads, dropout=drop, batch_first=True)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        hidden = int(dim * mlp_ratio)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Dropout(drop),
                                 nn.Linear(hidden, dim), nn.Dropout(drop))

    def forward(self, x):
        y = self.norm1(x)
        x = x + self.attn(y, y, y, need_weights=False)[0]
        x = x + self.mlp(self.norm2(x))
        return x


class VisionTransformer(nn.Module):
    def __init__(self, img_size=16, patch_size=4, in_chans=3, num_classes=5, embed_dim=32,
                 depth=2, num_heads=4, unfold=False):
        super().__init__()
        embed = UnfoldPatchEmbed if unfold else PatchEmbed
        self.patch_embed = embed(img_size, patch_size, in_chans, embed_dim)
        num_patches = self.patch_embed.num_patches
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, num_patches + 1, embed_dim))
        self.blocks = nn.ModuleList([Block(embed_dim, num_heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(embed_dim, eps=1e-6)
        self.head = nn.Linear(embed_dim, num_classes)
        nn.init.trunc_normal_(self.pos_embed, std=.02)
        nn.init.trunc_normal_(self.cls_token, std=.02)
        self.apply(self._init_weights)

    def _init_weights(self, m):
        if isinstance(m, nn.Linear):
            nn.init.trunc_normal_(m.weight, std=.02)
            if m.bias is not None:
                nn.init.constant_(m.bias, 0)
        elif isinstance(m, nn.LayerNorm):
            nn.init.constant_(m.bias, 0)
            nn.init.constant_(m.weight, 1.0)

    @torch.jit.ignore
    def no_weight_decay(self):
        return {'pos_embed', 'cls_token'}

    def forward_features(self, x):
        B = x.shape[0]
        x = self.patch_embed(x)
        cls_tokens = self.cls_token.expand(B, -1, -1)
        x = torch.cat((cls_tokens, x), dim=1)
        x = x + self.pos_embed
        for blk in self.blocks:
            x = blk(x)
        x = self.norm(x)
        return x[:, 0]

    def forward(self, x):
        return self.head(self.forward_features(x))


def make_data(rng, n, classes=5):
    """Images whose class is where a bright bar sits, with noise."""
    x = 0.3 * rng.randn(n, 3, 16, 16).astype(np.float32)
    y = rng.randint(0, classes, size=n)
    for i, c in enumerate(y):
        x[i, c % 3, 3 * c:3 * c + 3, :] += 1.0
    return torch.from_numpy(x), torch.from_numpy(y.astype(np.int64))


def param_groups(model, weight_decay):
    skip = model.no_weight_decay()
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        if p.ndim <= 1 or name in skip:
            no_decay.append(p)
        else:
            decay.append(p)
    return [{'params': no_decay, 'weight_decay': 0.}, {'params': decay, 'weight_decay': weight_decay}]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--steps', type=int, default=16)
    parser.add_argument('--warmup', type=int, default=4)
    parser.add_argument('--unfold', action='store_true')
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    x, y = make_data(rng, 64)
    xv, yv = make_data(rng, 32)

    model = VisionTransformer(unfold=args.unfold)
    if args.init:
        if os.path.exists(args.init):
            model.load_state_dict(torch.load(args.init))
        else:
            torch.save(model.state_dict(), args.init)
    print('params:', sum(p.numel() for p in model.parameters() if p.requires_grad))
    optimizer = torch.optim.AdamW(param_groups(model, 0.05), lr=3e-3, betas=(0.9, 0.999))

    def lr_lambda(step):
        if step < args.warmup:
            return float(step + 1) / args.warmup
        progress = (step - args.warmup) / max(1, args.steps - args.warmup)
        return 0.5 * (1.0 + math.cos(math.pi * progress))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    for step in range(args.steps):
        model.train()
        for xb, yb in zip(x.split(32), y.split(32)):
            optimizer.zero_grad(set_to_none=True)
            loss = criterion(model(xb), yb)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            optimizer.step()
        scheduler.step()
        print('step {} lr {:.6f} loss: {:.6f}'.format(step, scheduler.get_last_lr()[0], loss.item()))
    model.eval()
    with torch.inference_mode():
        logits = model(xv)
        print('val loss: {:.6f} acc {:.3f}'.format(F.cross_entropy(logits, yv).item(),
                                                   (logits.argmax(-1) == yv).float().mean().item()))

    # fine-tune only the head with OneCycleLR and a CosineAnnealingLR-free SGD
    for p in model.parameters():
        p.requires_grad_(False)
    model.head.reset_parameters()
    for p in model.head.parameters():
        p.requires_grad_(True)
    with torch.no_grad():
        nn.init.zeros_(model.head.weight)
        nn.init.zeros_(model.head.bias)
    opt = torch.optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=0.1,
                          momentum=0.9)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=6)
    for step in range(6):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        sched.step()
        print('finetune {} loss: {:.6f}'.format(step, loss.item()))


if __name__ == '__main__':
    main()
