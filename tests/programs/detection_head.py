#!/usr/bin/env python
"""A single-scale anchor-free detector (FCOS / CenterNet flavour) on synthetic boxes, with the
box utilities detection repositories write in plain torch: box_iou and generalized IoU by
broadcasting torch.max/torch.min, a GIoU loss, sigmoid focal loss, target assignment with
(values, indices) = tensor.max(dim), greedy NMS over scores.sort(0, descending=True),
torch.meshgrid(indexing='ij') centres, and an average precision from cumsum'd true/false
positives; SGD with warmup via LinearLR chained into MultiStepLR by SequentialLR."""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def box_area(boxes):
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def box_iou(boxes1, boxes2):
    area1, area2 = box_area(boxes1), box_area(boxes2)
    lt = torch.max(boxes1[:, None, :2], boxes2[:, :2])  # [N,M,2]
    rb = torch.min(boxes1[:, None, 2:], boxes2[:, 2:])  # [N,M,2]
    wh = (rb - lt).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    union = area1[:, None] + area2 - inter
    return inter / union, union


def generalized_box_iou(boxes1, boxes2):
    iou, union = box_iou(boxes1, boxes2)
    lt = torch.min(boxes1[:, None, :2], boxes2[:, :2])
    rb = torch.max(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = (rb - lt).clamp(min=0)
    area = wh[:, :, 0] * wh[:, :, 1]
    return iou - (area - union) / area


def sigmoid_focal_loss(inputs, targets, alpha=0.25, gamma=2.0):
    prob = inputs.sigmoid()
    ce_loss = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    p_t = prob * targets + (1 - prob) * (1 - targets)
    loss = ce_loss * ((1 - p_t) ** gamma)
    alpha_t = alpha * targets + (1 - alpha) * (1 - targets)
    return (alpha_t * loss).sum()


def nms(boxes, scores, iou_threshold):
    order = scores.sort(0, descending=True)[1]
    keep = []
    while order.numel() > 0:
        i = order[0].item()
        keep.append(i)
        if order.numel() == 1:
            break
        iou = box_iou(boxes[i].unsqueeze(0), boxes[order[1:]])[0].squeeze(0)
        order = order[1:][iou <= iou_threshold]
    return torch.as_tensor(keep, dtype=torch.long)


def average_precision(pred_boxes, pred_scores, pred_images, gt_boxes, gt_images, thr=0.5):
    order = torch.argsort(pred_scores, descending=True)
    pred_boxes, pred_images = pred_boxes[order], pred_images[order]
    matched = torch.zeros(len(gt_boxes), dtype=torch.bool)
    tp = torch.zeros(len(order))
    for k in range(len(order)):
        cand = (gt_images == pred_images[k]).nonzero(as_tuple=True)[0]
        if cand.numel() == 0:
            continue
        ious = box_iou(pred_boxes[k:k + 1], gt_boxes[cand])[0][0]
        best_iou, best = ious.max(dim=0)
        if best_iou >= thr and not matched[cand[best]]:
            matched[cand[best]] = True
            tp[k] = 1
    fp = 1 - tp
    tp_c, fp_c = torch.cumsum(tp, 0), torch.cumsum(fp, 0)
    recall = tp_c / max(len(gt_boxes), 1)
    precision = tp_c / (tp_c + fp_c)
    # all-point interpolation: the precision envelope, summed over recall steps
    mpre = torch.cat([torch.zeros(1), precision, torch.zeros(1)])
    mrec = torch.cat([torch.zeros(1), recall, torch.ones(1)])
    mpre = torch.flip(torch.cummax(torch.flip(mpre, [0]), dim=0).values, [0])
    idx = torch.where(mrec[1:] != mrec[:-1])[0]
    return torch.sum((mrec[idx + 1] - mrec[idx]) * mpre[idx + 1]).item()


class Detector(nn.Module):
    def __init__(self, stride=4, width=16):
        super().__init__()
        self.stride = stride
        self.backbone = nn.Sequential(
            nn.Conv2d(1, width, 3, 2, 1), nn.GroupNorm(4, width), nn.ReLU(),
            nn.Conv2d(width, width, 3, 2, 1), nn.GroupNorm(4, width), nn.ReLU(),
            nn.Conv2d(width, width, 3, 1, 1), nn.GroupNorm(4, width), nn.ReLU())
        self.cls = nn.Conv2d(width, 1, 3, 1, 1)
        self.reg = nn.Conv2d(width, 4, 3, 1, 1)
        nn.init.constant_(self.cls.bias, -2.0)  # prior probability ~0.12

    def forward(self, x):
        f = self.backbone(x)
        return self.cls(f), F.relu(self.reg(f)) * self.stride

    def centres(self, h, w):
        ys, xs = torch.meshgrid(torch.arange(h), torch.arange(w), indexing='ij')
        return torch.stack([xs, ys], dim=-1).reshape(-1, 2).float() * self.stride + self.stride / 2

    def decode(self, ltrb, centres):
        return torch.cat([centres - ltrb[:, :2], centres + ltrb[:, 2:]], dim=1)


def make_image(rng, size=32):
    img = 0.1 * rng.randn(1, size, size).astype(np.float32)
    boxes = []
    for _ in range(rng.randint(1, 4)):
        w, h = rng.randint(6, 13), rng.randint(6, 13)
        x0, y0 = rng.randint(0, size - w), rng.randint(0, size - h)
        img[0, y0:y0 + h, x0:x0 + w] += 1.0
        boxes.append([x0, y0, x0 + w, y0 + h])
    return torch.from_numpy(img), torch.tensor(boxes, dtype=torch.float32)


def assign(centres, gt):
    """Each location inside a box takes the smallest such box (FCOS rule)."""
    inside = ((centres[:, None, 0] > gt[None, :, 0]) & (centres[:, None, 0] < gt[None, :, 2])
              & (centres[:, None, 1] > gt[None, :, 1]) & (centres[:, None, 1] < gt[None, :, 3]))
    areas = box_area(gt)[None, :].expand(len(centres), -1).clone()
    areas[~inside] = float('inf')
    min_area, which = areas.min(dim=1)
    positive = torch.isfinite(min_area)
    return positive, gt[which]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=4)
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    train = [make_image(rng) for _ in range(48)]
    test = [make_image(rng) for _ in range(12)]
    model = Detector()
    if args.init:
        if os.path.exists(args.init):
            model.load_state_dict(torch.load(args.init))
        else:
            torch.save(model.state_dict(), args.init)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    warmup = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.1, total_iters=4)
    steps = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[12], gamma=0.1)
    scheduler = torch.optim.lr_scheduler.SequentialLR(optimizer, [warmup, steps], milestones=[4])
    centres = model.centres(8, 8)
    for epoch in range(args.epochs):
        model.train()
        tot_cls, tot_box = 0.0, 0.0
        for b in range(0, len(train), 8):
            imgs = torch.stack([im for im, _ in train[b:b + 8]])
            cls_out, reg_out = model(imgs)
            loss_cls, loss_box, n_pos = 0.0, 0.0, 0
            for k, (_, gt) in enumerate(train[b:b + 8]):
                logits = cls_out[k].permute(1, 2, 0).reshape(-1)
                ltrb = reg_out[k].permute(1, 2, 0).reshape(-1, 4)
                positive, matched = assign(centres, gt)
                loss_cls = loss_cls + sigmoid_focal_loss(logits, positive.float())
                if positive.any():
                    pred = model.decode(ltrb[positive], centres[positive])
                    giou = torch.diag(generalized_box_iou(pred, matched[positive]))
                    loss_box = loss_box + (1 - giou).sum()
                    n_pos += int(positive.sum())
            loss = (loss_cls + 2.0 * loss_box) / max(n_pos, 1)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            tot_cls += loss_cls.item() / max(n_pos, 1)
            tot_box += loss_box.item() / max(n_pos, 1)
        model.eval()
        with torch.no_grad():
            preds, scores, images = [], [], []
            for k, (im, _) in enumerate(test):
                cls_out, reg_out = model(im[None])
                s = cls_out[0].permute(1, 2, 0).reshape(-1).sigmoid()
                boxes = model.decode(reg_out[0].permute(1, 2, 0).reshape(-1, 4), centres)
                keep = s > 0.05
                boxes, s = boxes[keep], s[keep]
                kept = nms(boxes, s, 0.5)[:10]
                preds.append(boxes[kept])
                scores.append(s[kept])
                images.append(torch.full((len(kept),), k, dtype=torch.long))
            gt_boxes = torch.cat([g for _, g in test])
            gt_images = torch.cat([torch.full((len(g),), k, dtype=torch.long)
                                   for k, (_, g) in enumerate(test)])
            ap = average_precision(torch.cat(preds), torch.cat(scores), torch.cat(images),
                                   gt_boxes, gt_images) if sum(map(len, preds)) else 0.0
        print('epoch {} lr {:.5f} cls loss {:.5f} box loss {:.5f} detections {} AP50 {:.3f}'.format(
            epoch, scheduler.get_last_lr()[0], tot_cls / 6, tot_box / 6,
            sum(map(len, preds)), ap))


if __name__ == '__main__':
    main()
