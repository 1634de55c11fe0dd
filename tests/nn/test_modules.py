"""ts.nn modules vs PyTorch with identical weights: outputs, input and parameter gradients,
train and eval modes; Module mechanics (registration, state dicts, hooks, repr)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import tessera as ts
from tessera import nn
from harness import close, compare_module, randn, rng, tt


LAYERS = [
    (lambda m: m.Linear(5, 3), (4, 5)),
    (lambda m: m.Linear(5, 3, bias=False), (2, 7, 5)),
    (lambda m: m.Identity(), (3, 4)),
    (lambda m: m.Flatten(), (2, 3, 4, 5)),
    (lambda m: m.Flatten(0, 2), (2, 3, 4, 5)),
    (lambda m: m.Unflatten(1, (3, 4)), (2, 12, 5)),
    (lambda m: m.Conv1d(3, 4, 3), (2, 3, 10)),
    (lambda m: m.Conv1d(4, 6, 3, stride=2, padding=2, dilation=2, groups=2), (2, 4, 11)),
    (lambda m: m.Conv1d(3, 4, 4, padding="same"), (2, 3, 9)),
    (lambda m: m.Conv2d(3, 4, 3), (2, 3, 8, 7)),
    (lambda m: m.Conv2d(3, 6, (3, 2), stride=(2, 1), padding=(1, 2), dilation=(1, 2)), (2, 3, 9, 8)),
    (lambda m: m.Conv2d(4, 8, 3, groups=4, bias=False), (1, 4, 6, 6)),
    (lambda m: m.Conv2d(2, 3, 4, padding="same"), (2, 2, 7, 6)),
    (lambda m: m.Conv2d(2, 3, 3, padding="valid"), (2, 2, 5, 5)),
    (lambda m: m.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"), (2, 2, 5, 5)),
    (lambda m: m.Conv2d(2, 3, 3, padding=1, padding_mode="replicate"), (2, 2, 5, 5)),
    (lambda m: m.Conv2d(2, 3, 3, padding=1, padding_mode="circular"), (2, 2, 5, 5)),
    (lambda m: m.Conv2d(2, 3, 3), (2, 5, 5)),  # unbatched
    (lambda m: m.MaxPool2d(2), (2, 3, 8, 8)),
    (lambda m: m.MaxPool2d(3, stride=2, padding=1), (2, 3, 9, 7)),
    (lambda m: m.MaxPool2d(3, stride=2, ceil_mode=True), (1, 2, 8, 8)),
    (lambda m: m.MaxPool2d(2, dilation=2), (1, 2, 7, 7)),
    (lambda m: m.MaxPool1d(3, stride=2), (2, 3, 9)),
    (lambda m: m.AvgPool2d(2), (2, 3, 8, 8)),
    (lambda m: m.AvgPool2d(3, stride=2, padding=1), (2, 3, 9, 7)),
    (lambda m: m.AvgPool2d(3, stride=2, padding=1, count_include_pad=False), (2, 3, 9, 7)),
    (lambda m: m.AvgPool2d(3, stride=2, ceil_mode=True), (1, 2, 8, 8)),
    (lambda m: m.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False), (1, 2, 8, 8)),
    (lambda m: m.AvgPool1d(3, stride=2), (2, 3, 9)),
    (lambda m: m.AdaptiveAvgPool2d(1), (2, 3, 6, 4)),
    (lambda m: m.AdaptiveAvgPool2d((2, 3)), (2, 3, 6, 9)),
    (lambda m: m.AdaptiveAvgPool2d((4, 3)), (2, 3, 7, 5)),
    (lambda m: m.AdaptiveMaxPool2d((3, 2)), (2, 3, 7, 5)),
    (lambda m: m.AdaptiveAvgPool1d(3), (2, 3, 7)),
    (lambda m: m.LayerNorm(6), (3, 4, 6)),
    (lambda m: m.LayerNorm((4, 6), elementwise_affine=False), (3, 4, 6)),
    (lambda m: m.LayerNorm(6, bias=False), (3, 6)),
    (lambda m: m.RMSNorm(6), (3, 4, 6)),
    (lambda m: m.RMSNorm((4, 6), eps=1e-3), (3, 4, 6)),
    (lambda m: m.GroupNorm(2, 6), (3, 6, 4, 2)),
    (lambda m: m.GroupNorm(3, 6, affine=False), (3, 6, 5)),
    (lambda m: m.GroupNorm(3, 6, bias=False), (3, 6, 5)),
    (lambda m: m.BatchNorm2d(3, bias=False), (4, 3, 2, 2)),
]

ACTIVATIONS = [
    lambda m: m.ReLU(), lambda m: m.ReLU6(), lambda m: m.GELU(), lambda m: m.GELU("tanh"),
    lambda m: m.SiLU(), lambda m: m.Mish(), lambda m: m.ELU(), lambda m: m.ELU(0.5),
    lambda m: m.CELU(0.7), lambda m: m.LeakyReLU(), lambda m: m.LeakyReLU(0.2),
    lambda m: m.Hardswish(), lambda m: m.Hardsigmoid(), lambda m: m.SELU(), lambda m: m.Softplus(),
    lambda m: m.Softplus(2.0, 5.0), lambda m: m.Sigmoid(), lambda m: m.LogSigmoid(),
    lambda m: m.Tanh(), lambda m: m.Softsign(), lambda m: m.Tanhshrink(), lambda m: m.Hardtanh(-2, 1),
    lambda m: m.Softmax(dim=1), lambda m: m.LogSoftmax(dim=-1), lambda m: m.Softmin(dim=0),
    lambda m: m.GLU(), lambda m: m.Dropout(0.3), lambda m: m.Dropout2d(0.3),
]


@pytest.mark.parametrize("case", range(len(LAYERS)))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_matches_torch(case: int, dtype) -> None:
    make, shape = LAYERS[case]
    torch.manual_seed(case)
    tm = make(torch.nn)
    if dtype == np.float64:
        tm = tm.double()
    sm = make(nn)
    if dtype == np.float64:
        sm = sm.to(ts.float64)
    tol = 1e-5 if dtype == np.float32 else 1e-10
    compare_module(sm, tm, randn(*shape, dtype=dtype), rtol=tol, atol=tol)


@pytest.mark.parametrize("case", range(len(ACTIVATIONS)))
def test_activation_matches_torch(case: int) -> None:
    make = ACTIVATIONS[case]
    x = randn(3, 4, 6, 2, dtype=np.float64) * 3
    x[0, 0, 0, :] = [25.0, -30.0]  # large magnitudes: no overflow in unused branches
    # train=False: Dropout is the identity in eval mode (train mode is tested separately).
    compare_module(make(nn), make(torch.nn), x, rtol=1e-6, atol=1e-6, train=False)


def test_gelu_exact_accuracy() -> None:
    x = np.linspace(-8, 8, 2001)
    xs = tt(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    ys, yt = nn.functional.gelu(xs), torch.nn.functional.gelu(xt)
    close(ys, yt, rtol=0, atol=3e-8)
    ys.sum().backward()
    yt.sum().backward()
    close(xs.grad, xt.grad, rtol=0, atol=1e-7)
    close(nn.functional.erf(tt(x)), torch.erf(torch.tensor(x)), rtol=0, atol=1.5e-7)
    close(nn.functional.erfc(tt(x)), torch.erfc(torch.tensor(x)), rtol=1.2e-7, atol=0)


@pytest.mark.parametrize("cls,shape", [("BatchNorm1d", (8, 5)), ("BatchNorm1d", (4, 5, 3)),
                                       ("BatchNorm2d", (4, 5, 3, 2))])
@pytest.mark.parametrize("kw", [{}, {"momentum": None}, {"affine": False},
                                {"track_running_stats": False}, {"momentum": 0.3, "eps": 1e-3}])
def test_batchnorm_train_then_eval(cls: str, shape, kw) -> None:
    tm = getattr(torch.nn, cls)(5, **kw)
    sm = getattr(nn, cls)(5, **kw)
    with torch.no_grad():
        if tm.affine:
            tm.weight.uniform_(0.5, 1.5)
            tm.bias.uniform_(-0.5, 0.5)
    sm.load_state_dict(tm.state_dict())
    for step in range(3):  # running statistics accumulate over several batches
        compare_module(sm, tm, randn(*shape) * 2 + step, rtol=1e-5, atol=1e-5, train=True)
    compare_module(sm, tm, randn(*shape), rtol=1e-5, atol=1e-5, train=False)
    if tm.track_running_stats:
        assert int(sm.num_batches_tracked.item()) == int(tm.num_batches_tracked) == 3


@pytest.mark.parametrize("padding_idx", [None, 2, -1])
def test_embedding(padding_idx) -> None:
    tm = torch.nn.Embedding(7, 4, padding_idx=padding_idx)
    sm = nn.Embedding(7, 4, padding_idx=padding_idx)
    idx = np.array([[0, 2, 6], [2, 3, 2]], dtype=np.int64)
    compare_module(sm, tm, idx)
    if padding_idx is not None:
        row = padding_idx % 7
        assert np.all(nn.Embedding(7, 4, padding_idx=padding_idx).weight.numpy()[row] == 0)
        assert np.all(sm.weight.grad.numpy()[row] == 0)


def test_dropout_train_mode() -> None:
    x = np.ones((200, 50), dtype=np.float32)
    d = nn.Dropout(0.25)
    xs = tt(x, requires_grad=True)
    y = d(xs)
    vals = y.numpy()
    assert set(np.unique(vals)).issubset({0.0, np.float32(1 / 0.75)})
    assert abs((vals == 0).mean() - 0.25) < 0.02
    y.sum().backward()
    np.testing.assert_array_equal(xs.grad.numpy(), vals)  # grad = mask / (1 - p)
    d.eval()
    np.testing.assert_array_equal(d(xs).numpy(), x)
    y2 = nn.Dropout2d(0.5)(tt(np.ones((4, 30, 3, 3), dtype=np.float32))).numpy()
    assert np.all(y2.std(axis=(2, 3)) == 0)  # whole channels are dropped or kept
    assert np.all(nn.Dropout(1.0)(xs).numpy() == 0)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.act = nn.ReLU()
        self.block = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8))
        self.heads = nn.ModuleList([nn.Linear(8, 2), nn.Linear(8, 3)])
        self.extra = nn.ModuleDict({"a": nn.LayerNorm(8)})
        self.scale = nn.Parameter(ts.ones((1,)))
        self.register_buffer("steps", ts.zeros((), dtype=ts.int64))
        self.register_buffer("cache", ts.zeros((2,)), persistent=False)

    def forward(self, x):
        h = self.extra["a"](self.block(self.act(self.fc1(x)))) * self.scale
        return [head(h) for head in self.heads]


class TorchNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(4, 8)
        self.act = torch.nn.ReLU()
        self.block = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.BatchNorm1d(8))
        self.heads = torch.nn.ModuleList([torch.nn.Linear(8, 2), torch.nn.Linear(8, 3)])
        self.extra = torch.nn.ModuleDict({"a": torch.nn.LayerNorm(8)})
        self.scale = torch.nn.Parameter(torch.ones(1))
        self.register_buffer("steps", torch.zeros((), dtype=torch.int64))
        self.register_buffer("cache", torch.zeros(2), persistent=False)

    def forward(self, x):
        h = self.extra["a"](self.block(self.act(self.fc1(x)))) * self.scale
        return [head(h) for head in self.heads]


def test_module_registration_matches_torch() -> None:
    s, t = Net(), TorchNet()
    assert [n for n, _ in s.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in s.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert list(s.state_dict()) == list(t.state_dict())
    assert [n for n, _ in s.named_modules()] == [n for n, _ in t.named_modules()]
    assert [n for n, _ in s.named_children()] == [n for n, _ in t.named_children()]
    assert [n for n, _ in s.named_parameters(recurse=False)] == ["scale"]
    assert len(list(s.parameters())) == len(list(t.parameters()))
    assert len(list(s.buffers())) == 5
    assert isinstance(s.scale, nn.Parameter) and not isinstance(s.scale * 2, nn.Parameter)
    assert s.scale.requires_grad and s.scale.is_leaf
    s.load_state_dict(t.state_dict())
    x = randn(5, 4)
    for a, b in zip(s(tt(x)), t(torch.tensor(x))):
        close(a, b, 1e-5, 1e-5)
    s.eval()
    assert not s.training and not s.block[1].training and not s.heads[0].training
    s.train()
    assert s.block[1].training


def test_state_dict_shares_storage_and_load_errors() -> None:
    m = nn.Linear(3, 2)
    sd = m.state_dict()
    assert not sd["weight"].requires_grad
    with ts.no_grad():
        m.weight[...] = 5
    assert np.all(sd["weight"].numpy() == 5)
    # NumPy arrays and torch tensors load directly.
    m.load_state_dict({"weight": np.zeros((2, 3), np.float32), "bias": torch.ones(2)})
    assert np.all(m.weight.numpy() == 0) and np.all(m.bias.numpy() == 1)
    res = m.load_state_dict({"weight": np.ones((2, 3), np.float32), "extra": np.ones(1)},
                            strict=False)
    assert res.missing_keys == ["bias"] and res.unexpected_keys == ["extra"]
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "bias"'):
        m.load_state_dict({"weight": np.ones((2, 3), np.float32)})
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "x"'):
        m.load_state_dict({"weight": np.ones((2, 3)), "bias": np.ones(2), "x": np.ones(1)})
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        m.load_state_dict({"weight": np.ones((3, 3)), "bias": np.ones(2)})
    m2 = nn.Linear(3, 2)
    m2.load_state_dict({"weight": ts.full((2, 3), 2.0), "bias": ts.zeros(2)}, assign=True)
    assert isinstance(m2.weight, nn.Parameter) and float(m2.weight[0, 0].item()) == 2.0


def test_torch_checkpoint_loads_into_cnn() -> None:
    def build(m):
        return m.Sequential(m.Conv2d(1, 4, 3, padding=1), m.BatchNorm2d(4), m.ReLU(),
                            m.MaxPool2d(2), m.Flatten(), m.Linear(4 * 4 * 4, 10))
    tm, sm = build(torch.nn), build(nn)
    tm.train()
    tm(torch.randn(8, 1, 8, 8))  # non-trivial running statistics
    compare_module(sm, tm, randn(3, 1, 8, 8), train=False)
    compare_module(sm, tm, randn(3, 1, 8, 8), train=True)


def test_zero_grad_hooks_apply_to() -> None:
    m = nn.Sequential(nn.Linear(3, 2), nn.Tanh())
    m(ts.ones((1, 3))).sum().backward()
    assert m[0].weight.grad is not None
    m.zero_grad(set_to_none=False)
    assert np.all(m[0].weight.grad.numpy() == 0)
    m.zero_grad()
    assert m[0].weight.grad is None
    calls = []
    h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
    h2 = m.register_forward_hook(lambda mod, args, out: calls.append(out.shape) or out + 1)
    base = m[1](m[0](ts.ones((1, 3)) * 2)) + 1
    close(m(ts.ones((1, 3))), base.numpy())
    assert calls == [(1, 2)]
    h1.remove()
    h2.remove()
    close(m(ts.ones((1, 3))), m[1](m[0](ts.ones((1, 3)))).numpy())
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Linear", "Tanh", "Sequential"]
    m.to(ts.float64)
    assert m[0].weight.dtype == ts.float64 and isinstance(m[0].weight, nn.Parameter)
    assert m(ts.ones((1, 3), dtype=ts.float64)).dtype == ts.float64
    bn = nn.BatchNorm1d(3).double()
    assert bn.running_mean.dtype == ts.float64 and bn.num_batches_tracked.dtype == ts.int64


def test_containers_and_repr() -> None:
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert len(seq) == 3 and isinstance(seq[-1], nn.Linear)
    assert isinstance(seq[1:], nn.Sequential) and len(seq[1:]) == 2
    del seq[1]
    assert list(seq._modules) == ["0", "1"]
    seq.append(nn.Sigmoid())
    assert repr(seq) == ("Sequential(\n  (0): Linear(in_features=2, out_features=3, bias=True)\n"
                         "  (1): Linear(in_features=3, out_features=1, bias=True)\n"
                         "  (2): Sigmoid()\n)")
    assert repr(nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)) == \
        repr(torch.nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False))
    for make in (lambda m: m.LayerNorm(4), lambda m: m.BatchNorm2d(3), lambda m: m.Embedding(5, 2),
                 lambda m: m.GroupNorm(2, 4), lambda m: m.RMSNorm(3), lambda m: m.Linear(2, 3),
                 lambda m: m.GELU(), lambda m: m.Dropout(0.2), lambda m: m.Flatten()):
        assert repr(make(nn)) == repr(make(torch.nn))
    ml = nn.ModuleList([nn.ReLU()])
    ml.append(nn.Tanh())
    ml.insert(0, nn.Identity())
    assert [type(x).__name__ for x in ml] == ["Identity", "ReLU", "Tanh"]
    md = nn.ModuleDict({"x": nn.ReLU()})
    md["y"] = nn.Tanh()
    assert list(md.keys()) == ["x", "y"] and "y" in md and len(md) == 2
    with pytest.raises(IndexError):
        seq[5]


def test_module_errors() -> None:
    m = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="cannot assign 'int' as parameter 'weight'"):
        m.weight = 3
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        m.nothing
    with pytest.raises(KeyError, match="already exists"):
        m.register_buffer("weight", ts.ones(2))
    with pytest.raises(TypeError, match="Tensor or None expected"):
        m.register_buffer("b", 3)
    with pytest.raises(ValueError, match="conv2d: input with 3 channels"):
        nn.functional.conv2d(ts.ones((1, 3, 4, 4)), ts.ones((2, 2, 3, 3)))
    with pytest.raises(ValueError, match="BatchNorm2d: expected 4-D input"):
        nn.BatchNorm2d(3)(ts.ones((2, 3)))
    with pytest.raises(ValueError, match="layer_norm: normalized_shape"):
        nn.LayerNorm(3)(ts.ones((2, 4)))
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)

    class NoForward(nn.Module):
        pass
    with pytest.raises(NotImplementedError):
        NoForward()(1)
    m.weight = None
    assert m.weight is None and "weight" not in m.state_dict()


def test_default_init_matches_torch_distribution() -> None:
    m = nn.Linear(400, 300)
    bound = 1 / np.sqrt(400)
    w, b = m.weight.numpy(), m.bias.numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert abs(w.std() - bound / np.sqrt(3)) < 0.01 * bound
    assert np.abs(b).max() <= bound
    c = nn.Conv2d(16, 8, 3)
    cb = 1 / np.sqrt(16 * 9)
    assert np.abs(c.weight.numpy()).max() <= cb and np.abs(c.bias.numpy()).max() <= cb
    e = nn.Embedding(1000, 50).weight.numpy()
    assert abs(e.std() - 1) < 0.02 and abs(e.mean()) < 0.02


def test_parameter_containers_and_tied_weights() -> None:
    pl = nn.ParameterList([ts.ones(2), nn.Parameter(ts.zeros(3))])
    pl.append(ts.ones((1, 1)))
    assert len(pl) == 3 and all(isinstance(p, nn.Parameter) for p in pl)
    assert [n for n, _ in pl.named_parameters()] == ["0", "1", "2"]
    pd = nn.ParameterDict({"a": ts.ones(1)})
    pd["b"] = ts.zeros(2)
    assert list(pd.keys()) == ["a", "b"] and "b" in pd and pd["b"].requires_grad

    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(5, 3)
            self.out = nn.Linear(3, 5, bias=False)
            self.out.weight = self.emb.weight
    m = Tied()
    assert len(list(m.parameters())) == 1  # shared parameters are listed once
    assert list(m.state_dict()) == ["emb.weight", "out.weight"]  # but saved under both names
    m.out(m.emb(ts.asarray([[1, 2]]))).sum().backward()
    assert m.emb.weight.grad is not None and m.emb.weight.grad.shape == (5, 3)


def test_manual_seed_makes_init_and_dropout_reproducible() -> None:
    def run():
        ts.manual_seed(123)
        lin = nn.Linear(4, 3)
        return lin.weight.numpy().copy(), nn.functional.dropout(ts.ones((50,)), 0.5).numpy()
    (w1, d1), (w2, d2) = run(), run()
    np.testing.assert_array_equal(w1, w2)
    np.testing.assert_array_equal(d1, d2)
    ts.manual_seed(124)
    assert not np.array_equal(nn.Linear(4, 3).weight.numpy(), w1)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("masks", ["", "bool", "float", "kpm", "bool+kpm", "causal", "3d"])
@pytest.mark.parametrize("avg", [True, False])
def test_multihead_attention_matches_torch(batch_first, masks, avg) -> None:
    E, H, L, S, N = 8, 2, 5, 6, 3
    torch.manual_seed(0)
    tm = torch.nn.MultiheadAttention(E, H, batch_first=batch_first).double()
    with torch.no_grad():
        tm.in_proj_bias.uniform_(-0.5, 0.5)
        tm.out_proj.bias.uniform_(-0.5, 0.5)
    sm = nn.MultiheadAttention(E, H, batch_first=batch_first).double()
    sm.load_state_dict(tm.state_dict())
    S_ = L if masks == "causal" else S
    shp = (lambda l: (N, l, E)) if batch_first else (lambda l: (l, N, E))
    q, k, v = randn(*shp(L), dtype=np.float64), randn(*shp(S_), dtype=np.float64), randn(*shp(S_), dtype=np.float64)
    kw_t, kw_s = {}, {}
    if "bool" in masks:
        m = rng.uniform(0, 1, (L, S_)) > 0.6
        m[:, 0] = False
        kw_t["attn_mask"], kw_s["attn_mask"] = torch.tensor(m), tt(m)
    if masks == "float":
        m = randn(L, S_, dtype=np.float64)
        kw_t["attn_mask"], kw_s["attn_mask"] = torch.tensor(m), tt(m)
    if masks == "3d":
        m = randn(N * H, L, S_, dtype=np.float64)
        kw_t["attn_mask"], kw_s["attn_mask"] = torch.tensor(m), tt(m)
    if "kpm" in masks:
        m = np.zeros((N, S_), dtype=bool)
        m[:, -2:] = True
        kw_t["key_padding_mask"], kw_s["key_padding_mask"] = torch.tensor(m), tt(m)
    if masks == "causal":
        cm = torch.nn.Transformer.generate_square_subsequent_mask(L, dtype=torch.float64)
        kw_t["attn_mask"], kw_t["is_causal"] = cm, True
        kw_s["is_causal"] = True
    ins_t = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
    ins_s = [tt(a, requires_grad=True) for a in (q, k, v)]
    out_t, w_t = tm(*ins_t, average_attn_weights=avg, **kw_t)
    out_s, w_s = sm(*ins_s, average_attn_weights=avg, **kw_s)
    close(out_s, out_t, 1e-10, 1e-12)
    close(w_s, w_t, 1e-10, 1e-12)
    g = randn(*out_t.shape, dtype=np.float64)
    out_t.backward(torch.tensor(g))
    out_s.backward(tt(g))
    for a, b in zip(ins_s, ins_t):
        close(a.grad, b.grad, 1e-9, 1e-11)
    tp = dict(tm.named_parameters())
    for name, p in sm.named_parameters():
        close(p.grad, tp[name].grad, 1e-9, 1e-11)


def test_multihead_attention_unbatched_and_errors() -> None:
    tm = torch.nn.MultiheadAttention(4, 2).double()
    sm = nn.MultiheadAttention(4, 2).double()
    sm.load_state_dict(tm.state_dict())
    x = randn(3, 4, dtype=np.float64)
    o_t, w_t = tm(torch.tensor(x), torch.tensor(x), torch.tensor(x))
    o_s, w_s = sm(tt(x), tt(x), tt(x))
    close(o_s, o_t, 1e-10, 1e-12)
    close(w_s, w_t, 1e-10, 1e-12)
    assert sm(tt(x), tt(x), tt(x), need_weights=False)[1] is None
    with pytest.raises(ValueError, match="divisible by num_heads"):
        nn.MultiheadAttention(5, 2)


def test_multihead_attention_mask_dtypes_as_torch() -> None:
    """A bool key_padding_mask with a float attn_mask (the translation tutorial's decoder)
    gives torch's deprecation warning and the same values; an integer mask is refused, as
    torch's _canonical_mask does, instead of being added to the scores."""
    import warnings
    tm = torch.nn.MultiheadAttention(4, 2).double()
    sm = nn.MultiheadAttention(4, 2).double()
    sm.load_state_dict(tm.state_dict())
    x = randn(3, 2, 4, dtype=np.float64)
    kpm = np.array([[False, False, True], [False, False, False]])
    causal = np.triu(np.full((3, 3), -np.inf), 1)
    for am in (causal, causal == 0, None):
        with warnings.catch_warnings(record=True) as wt:
            warnings.simplefilter("always")
            o_t = tm(*[torch.tensor(x)] * 3, key_padding_mask=torch.tensor(kpm),
                     attn_mask=None if am is None else torch.tensor(am == 0 if am.dtype == bool else am))
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            o_s = sm(*[tt(x)] * 3, key_padding_mask=tt(kpm),
                     attn_mask=None if am is None else tt(am == 0 if am.dtype == bool else am))
        close(o_s[0], o_t[0], 1e-10, 1e-12)
        assert [str(w.message) for w in ws] == [str(w.message) for w in wt]
    for bad in ({"key_padding_mask": tt(kpm.astype(np.int64))},
                {"attn_mask": tt(np.zeros((3, 3), np.int32))}):
        with pytest.raises(AssertionError, match="only bool and floating types"):
            sm(*[tt(x)] * 3, **bad)
        with pytest.raises(AssertionError):
            tm(*[torch.tensor(x)] * 3, **{k: torch.tensor(v.numpy()) for k, v in bad.items()})


@pytest.mark.parametrize("kw", [{}, {"norm_first": True, "activation": "gelu"},
                                {"batch_first": True, "bias": False}])
def test_transformer_encoder_matches_torch(kw) -> None:
    torch.manual_seed(0)
    t_layer = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.1, **kw)
    tm = torch.nn.TransformerEncoder(t_layer, 2, norm=torch.nn.LayerNorm(8),
                                     enable_nested_tensor=False).double()
    sm = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.1, **kw),
                               2, norm=nn.LayerNorm(8)).double()
    assert list(sm.state_dict()) == list(tm.state_dict())
    x = randn(*((3, 5, 8) if kw.get("batch_first") else (5, 3, 8)), dtype=np.float64)
    mask = np.triu(np.ones((5, 5), dtype=bool), 1)
    sm.load_state_dict(tm.state_dict())
    sm.eval()
    tm.eval()
    out_t = tm(torch.tensor(x), mask=torch.tensor(mask))
    out_s = sm(tt(x), mask=tt(mask))
    # Exact GELU goes through the erfc fit (relative error ~1e-7).
    tol = 1e-6 if kw.get("activation") == "gelu" else 1e-9
    close(out_s, out_t, tol, tol / 10)
    compare_module(sm, tm, x, rtol=tol, atol=tol / 10, train=False)
    sm.train()
    y = sm(tt(x))  # dropout active: differs from eval, still finite
    assert np.isfinite(y.numpy()).all() and not np.allclose(y.numpy(), sm.eval()(tt(x)).numpy())
