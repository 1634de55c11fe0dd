"""tessera.nn.utils.prune against torch.nn.utils.prune: the same Linear/Conv2d modules (weights
copied across through NumPy, without ties) are pruned with both libraries and the masks, the
reparametrization (name_orig parameter, name_mask buffer, forward pre-hook), state_dict keys,
forward/backward and the errors compared. Random methods draw from each library's own
generator, so for them the counts and the structure of the masks are compared instead."""
import numpy as np
import pytest
import torch
import torch.nn.utils.prune as tprune

import tessera as ts
import tessera.nn.utils.prune as sprune

LIBS = [(torch, tprune), (ts, sprune)]


def np_(t):
    return np.asarray(t.detach().tolist(), dtype=np.float64)


def make(lib, kind, seed=0):
    """A Linear(6, 5) or Conv2d(3, 4, 3) whose weights (distinct magnitudes: no ties) and bias
    come from NumPy."""
    rng = np.random.default_rng(seed)
    m = lib.nn.Linear(6, 5) if kind == "linear" else lib.nn.Conv2d(3, 4, 3)
    w = rng.permutation(np.arange(1, m.weight.numel() + 1)).astype(np.float32)
    w = (w * rng.choice([-1, 1], size=w.size) / w.size).reshape(tuple(m.weight.shape))
    b = rng.standard_normal(tuple(m.bias.shape)).astype(np.float32)
    with lib.no_grad():
        m.weight.copy_(lib.tensor(w))
        m.bias.copy_(lib.tensor(b))
    return m


def both(kind, fn, seed=0):
    out = []
    for lib, pr in LIBS:
        m = make(lib, kind, seed)
        fn(lib, pr, m)
        out.append(m)
    return out


def check_reparam(tm, sm, name="weight"):
    """The same masks, weights, parameter/buffer names and state_dict keys."""
    assert [n for n, _ in sm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert [n for n, _ in sm.named_buffers()] == [n for n, _ in tm.named_buffers()]
    assert list(sm.state_dict().keys()) == list(tm.state_dict().keys())
    np.testing.assert_array_equal(np_(getattr(sm, name + "_mask")),
                                  np_(getattr(tm, name + "_mask")))
    np.testing.assert_allclose(np_(getattr(sm, name)), np_(getattr(tm, name)), rtol=1e-6)
    assert not isinstance(getattr(sm, name), ts.nn.Parameter)
    assert isinstance(getattr(sm, name + "_orig"), ts.nn.Parameter)
    assert sprune.is_pruned(sm)


@pytest.mark.parametrize("kind", ["linear", "conv"])
@pytest.mark.parametrize("amount", [0, 3, 0.0, 0.3, 0.5, 1.0])
def test_l1_unstructured_matches_torch(kind, amount):
    tm, sm = both(kind, lambda lib, pr, m: pr.l1_unstructured(m, "weight", amount=amount))
    check_reparam(tm, sm)


@pytest.mark.parametrize("kind", ["linear", "conv"])
@pytest.mark.parametrize("n", [1, 2, float("inf"), float("-inf")])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_ln_structured_matches_torch(kind, n, dim):
    tm, sm = both(kind, lambda lib, pr, m: pr.ln_structured(m, "weight", amount=0.5, n=n,
                                                            dim=dim))
    check_reparam(tm, sm)


@pytest.mark.parametrize("kind", ["linear", "conv"])
def test_identity_and_custom_from_mask_match_torch(kind):
    tm, sm = both(kind, lambda lib, pr, m: pr.identity(m, "bias"))
    check_reparam(tm, sm, "bias")
    rng = np.random.default_rng(3)
    mask = (rng.random(tuple(tm.weight.shape)) > 0.4).astype(np.float32)
    tm, sm = both(kind, lambda lib, pr, m: pr.custom_from_mask(m, "weight", lib.tensor(mask)))
    check_reparam(tm, sm)


@pytest.mark.parametrize("kind", ["linear", "conv"])
@pytest.mark.parametrize("amount", [2, 0.4])
def test_random_unstructured_counts(kind, amount):
    tm, sm = both(kind, lambda lib, pr, m: pr.random_unstructured(m, "weight", amount=amount))
    assert np_(sm.weight_mask).sum() == np_(tm.weight_mask).sum()
    assert set(np.unique(np_(sm.weight_mask))) <= {0.0, 1.0}
    np.testing.assert_array_equal(np_(sm.weight), np_(sm.weight_orig) * np_(sm.weight_mask))
    assert list(sm.state_dict().keys()) == list(tm.state_dict().keys())


@pytest.mark.parametrize("kind", ["linear", "conv"])
@pytest.mark.parametrize("dim", [0, 1])
def test_random_structured_prunes_whole_channels(kind, dim):
    tm, sm = both(kind, lambda lib, pr, m: pr.random_structured(m, "weight", amount=0.5,
                                                                dim=dim))
    for m in (tm, sm):
        mask = np.moveaxis(np_(m.weight_mask), dim, 0).reshape(m.weight.shape[dim], -1)
        assert all(row.min() == row.max() for row in mask)  # whole channels
    assert np_(sm.weight_mask).sum() == np_(tm.weight_mask).sum()


@pytest.mark.parametrize("kind", ["linear", "conv"])
def test_iterative_pruning_matches_torch(kind):
    def run(lib, pr, m):
        pr.l1_unstructured(m, "weight", amount=0.3)
        pr.ln_structured(m, "weight", amount=1, n=2, dim=0)
        pr.l1_unstructured(m, "weight", amount=2)
        pr.custom_from_mask(m, "weight", lib.ones_like(m.weight))

    tm, sm = both(kind, run)
    check_reparam(tm, sm)
    hooks = [h for h in sm._forward_pre_hooks.values()]
    assert len(hooks) == 1 and isinstance(hooks[0], sprune.PruningContainer)
    assert [type(h).__name__ for h in hooks[0]] == [type(h).__name__ for h in
                                                    next(iter(tm._forward_pre_hooks.values()))]
    assert len(hooks[0]) == 4


@pytest.mark.parametrize("dim", [0, -1])
def test_iterative_structured_matches_torch(dim):
    """A structured method after a structured one sees only the channels still kept; after
    an unstructured one, every channel with an entry left."""
    def run(lib, pr, m):
        pr.ln_structured(m, "weight", amount=1, n=2, dim=dim)
        pr.ln_structured(m, "weight", amount=0.5, n=1, dim=dim)
        pr.l1_unstructured(m, "weight", amount=0.5)
        pr.ln_structured(m, "weight", amount=1, n=float("inf"), dim=dim)

    tm, sm = both("conv", run)
    check_reparam(tm, sm)


def test_float64_module():
    def run(lib, pr, m):
        m.double()
        pr.l1_unstructured(m, "weight", amount=7)
        pr.ln_structured(m, "weight", amount=2, n=2, dim=0)

    tm, sm = both("linear", run)
    check_reparam(tm, sm)
    assert sm.weight.dtype == ts.float64 and sm.weight_mask.dtype == ts.float64


def test_iterative_random_prunes_only_unpruned():
    m = make(ts, "linear")
    sprune.l1_unstructured(m, "weight", amount=10)
    first = np_(m.weight_mask)
    sprune.random_unstructured(m, "weight", amount=0.5)  # half of the 20 left
    second = np_(m.weight_mask)
    assert second.sum() == 10 and np.all(second <= first)
    m = make(ts, "conv")
    sprune.random_structured(m, "weight", amount=1, dim=0)
    sprune.random_structured(m, "weight", amount=1, dim=0)
    per_channel = np_(m.weight_mask).reshape(4, -1)
    assert sorted(per_channel.max(axis=1)) == [0, 0, 1, 1]


def test_global_unstructured_matches_torch():
    def run(lib, pr, net, scores):
        params = [(net[0], "weight"), (net[2], "weight"), (net[0], "bias")]
        imp = None if scores is None else {(net[2], "weight"): lib.tensor(scores)}
        pr.global_unstructured(params, pruning_method=pr.L1Unstructured, amount=0.4,
                               importance_scores=imp)

    rng = np.random.default_rng(5)
    scores = rng.permutation(np.arange(1, 13)).reshape(2, 6).astype(np.float32) / 3
    for sc in (None, scores):
        nets = []
        for k, (lib, pr) in enumerate(LIBS):
            net = lib.nn.Sequential(make(lib, "linear", 1), lib.nn.ReLU(), lib.nn.Linear(6, 2))
            w = (rng.permutation(np.arange(1, 13)) / 7).reshape(2, 6).astype(np.float32) \
                if k == 0 else np_(nets[0][2].weight_orig).astype(np.float32)
            with lib.no_grad():
                net[2].weight.copy_(lib.tensor(w))
            if k == 1:
                with lib.no_grad():
                    net[0].bias.copy_(lib.tensor(np_(nets[0][0].bias_orig).astype(np.float32)))
            run(lib, pr, net, sc)
            nets.append(net)
        tn, sn = nets
        assert list(sn.state_dict().keys()) == list(tn.state_dict().keys())
        for name in ("0.weight_mask", "2.weight_mask", "0.bias_mask"):
            np.testing.assert_array_equal(np_(sn.state_dict()[name]), np_(tn.state_dict()[name]))


def test_global_unstructured_twice_prunes_the_rest():
    nets = []
    for lib, pr in LIBS:
        net = lib.nn.Sequential(make(lib, "linear", 2), make(lib, "linear", 3))
        for _ in range(2):
            pr.global_unstructured([(net[0], "weight"), (net[1], "weight")],
                                   pruning_method=pr.L1Unstructured, amount=0.25)
        nets.append(net)
    for i in range(2):
        np.testing.assert_array_equal(np_(nets[1][i].weight_mask), np_(nets[0][i].weight_mask))
    assert np_(nets[1][0].weight_mask).sum() + np_(nets[1][1].weight_mask).sum() == 34


def test_ties_prune_the_requested_count():
    for lib, pr in LIBS:
        m = lib.nn.Linear(4, 3)
        with lib.no_grad():
            m.weight.fill_(0.5)
        pr.l1_unstructured(m, "weight", amount=5)
        assert np_(m.weight_mask).sum() == 7
        m = lib.nn.Linear(4, 3)
        with lib.no_grad():
            m.weight.fill_(1.0)
        pr.ln_structured(m, "weight", amount=2, n=1, dim=1)
        assert np_(m.weight_mask).sum() == 6


@pytest.mark.parametrize("kind", ["linear", "conv"])
def test_forward_backward_after_pruning(kind):
    x = np.random.default_rng(7).standard_normal((2, 6) if kind == "linear" else (2, 3, 5, 5))
    x = x.astype(np.float32)
    outs, grads = [], []
    for lib, pr in LIBS:
        m = make(lib, kind)
        pr.l1_unstructured(m, "weight", amount=0.4)
        with lib.no_grad():  # the hook recomputes weight from weight_orig before the forward
            m.weight_orig.add_(1.0)
        y = m(lib.tensor(x))
        (y * y).sum().backward()
        outs.append(np_(y))
        grads.append(np_(m.weight_orig.grad))
        mask = np_(m.weight_mask)
        assert np.all(grads[-1][mask == 0] == 0) and np.all(grads[-1][mask == 1] != 0)
        assert m.weight_mask.grad is None
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("kind", ["linear", "conv"])
def test_remove_makes_pruning_permanent(kind):
    def run(lib, pr, m):
        pr.l1_unstructured(m, "weight", amount=0.5)
        pr.ln_structured(m, "weight", amount=1, n=1, dim=0)
        pr.remove(m, "weight")

    tm, sm = both(kind, run)
    assert isinstance(sm.weight, ts.nn.Parameter)
    assert [n for n, _ in sm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert list(sm.state_dict().keys()) == list(tm.state_dict().keys())
    assert not sprune.is_pruned(sm) and len(sm._forward_pre_hooks) == 0
    np.testing.assert_allclose(np_(sm.weight), np_(tm.weight), rtol=1e-6)
    with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
        sprune.remove(sm, "weight")


def test_state_dict_round_trip():
    src = make(ts, "conv")
    sprune.l1_unstructured(src, "weight", amount=0.5)
    sprune.l1_unstructured(src, "bias", amount=1)
    sd = src.state_dict()
    assert list(sd.keys()) == ["weight_orig", "bias_orig", "weight_mask", "bias_mask"]
    dst = ts.nn.Conv2d(3, 4, 3)
    with pytest.raises(RuntimeError):  # unpruned: the keys differ
        dst.load_state_dict(sd)
    sprune.identity(dst, "weight")
    sprune.identity(dst, "bias")
    dst.load_state_dict(sd)
    x = ts.tensor(np.random.default_rng(0).standard_normal((1, 3, 5, 5)).astype(np.float32))
    np.testing.assert_allclose(np_(dst(x)), np_(src(x)), rtol=1e-6)
    np.testing.assert_array_equal(np_(dst.weight_mask), np_(src.weight_mask))
    # and the same file torch writes loads into tessera
    tm = make(torch, "conv")
    tprune.l1_unstructured(tm, "weight", amount=0.5)
    sm = ts.nn.Conv2d(3, 4, 3)
    sprune.identity(sm, "weight")
    sm.load_state_dict({k: ts.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    np.testing.assert_allclose(np_(sm(x)), np_(tm(torch.tensor(np_(x), dtype=torch.float32))),
                               rtol=1e-5, atol=1e-6)


def test_importance_scores_matches_torch():
    rng = np.random.default_rng(11)
    scores = rng.permutation(np.arange(1, 31)).reshape(5, 6).astype(np.float32)
    tm, sm = both("linear", lambda lib, pr, m: pr.l1_unstructured(
        m, "weight", amount=0.5, importance_scores=lib.tensor(scores)))
    check_reparam(tm, sm)
    tm, sm = both("linear", lambda lib, pr, m: pr.ln_structured(
        m, "weight", amount=2, n=2, dim=0, importance_scores=lib.tensor(scores)))
    check_reparam(tm, sm)


def test_prune_method_and_classes():
    w = np.array([[0.1, -0.5, 0.3], [0.9, -0.2, 0.7]], dtype=np.float32)
    for lib, pr in LIBS:
        out = pr.L1Unstructured(amount=2).prune(lib.tensor(w))
        np.testing.assert_allclose(np_(out), w * np.array([[0, 1, 1], [1, 0, 1]]))
        out = pr.LnStructured(amount=1, n=1, dim=-1).prune(lib.tensor(w))
        np.testing.assert_allclose(np_(out), w * np.array([[1, 0, 1], [1, 0, 1]]))
    m = make(ts, "linear")
    method = sprune.L1Unstructured.apply(m, "weight", amount=3)
    assert isinstance(method, sprune.L1Unstructured) and method._tensor_name == "weight"
    assert list(m._forward_pre_hooks.values()) == [method]


def test_custom_method_subclass_and_deepcopy():
    """The tutorial's custom method (every other entry) and copy.deepcopy of a pruned
    model (lottery-ticket code keeps a copy of the pruned network)."""
    import copy

    masks = []
    for lib, pr in LIBS:
        class EveryOther(pr.BasePruningMethod):
            PRUNING_TYPE = "unstructured"

            def compute_mask(self, t, default_mask):
                mask = default_mask.clone()
                mask.view(-1)[::2] = 0
                return mask

        m = make(lib, "linear")
        pr.l1_unstructured(m, "bias", amount=1)
        EveryOther.apply(m, "bias")
        masks.append(np_(m.bias_mask))
        with lib.no_grad():  # torch deep-copies only graph leaves: recompute bias as one
            m(lib.ones(1, 6))
        c = copy.deepcopy(m)
        assert pr.is_pruned(c) and list(c.state_dict()) == list(m.state_dict())
        with lib.no_grad():
            c.bias_orig.fill_(2.0)
        c(lib.ones(1, 6))
        np.testing.assert_array_equal(np_(c.bias), 2.0 * masks[-1])
        np.testing.assert_array_equal(np_(m.bias), np_(m.bias_orig) * masks[-1])
    np.testing.assert_array_equal(masks[1], masks[0])


def test_errors_match_torch():
    for lib, pr in LIBS:
        with pytest.raises(TypeError, match="Invalid type for amount"):
            pr.L1Unstructured(amount="a")
        with pytest.raises(ValueError, match="should either be a float in the range"):
            pr.L1Unstructured(amount=-1)
        with pytest.raises(ValueError, match="should either be a float in the range"):
            pr.RandomUnstructured(amount=1.5)
        m = make(lib, "linear")
        with pytest.raises(TypeError):  # torch: from topk, tessera: at construction
            pr.l1_unstructured(m, "weight", amount=True)
        with pytest.raises(ValueError, match="should be smaller than the number of parameters"):
            pr.l1_unstructured(m, "weight", amount=31)
        assert isinstance(m.weight, lib.nn.Parameter) and not hasattr(m, "weight_orig")
        with pytest.raises(ValueError, match="Structured pruning can only be applied"):
            pr.ln_structured(m, "bias", amount=1, n=2, dim=0)
        with pytest.raises(IndexError, match="Invalid index 2"):
            pr.random_structured(m, "weight", amount=1, dim=2)
        with pytest.raises(AssertionError):
            pr.l1_unstructured(m, "weight", amount=1, importance_scores=lib.ones(3))
        with pytest.raises(TypeError, match="PRUNING_TYPE"):
            pr.global_unstructured([(m, "weight")], pruning_method=pr.RandomStructured,
                                   amount=1)
        with pytest.raises(TypeError, match="importance_scores must be of type dict"):
            pr.global_unstructured([(m, "weight")], pruning_method=pr.L1Unstructured,
                                   importance_scores=[1], amount=1)
        with pytest.raises(TypeError, match="not an Iterable"):
            pr.global_unstructured(5, pruning_method=pr.L1Unstructured, amount=1)
        with pytest.raises(ValueError, match="has to be pruned"):
            pr.remove(m, "weight")
        assert not pr.is_pruned(m)
        ident = pr.Identity()
        with pytest.raises(AttributeError):  # not bound to a tensor yet
            pr.PruningContainer(ident)
        ident._tensor_name = "weight"
        c = pr.PruningContainer(ident)
        with pytest.raises(TypeError, match="is not a BasePruningMethod subclass"):
            c.add_pruning_method(5)


def test_hook_order_with_user_hooks():
    """Re-pruning takes the old hook off and registers the container last, as torch."""
    orders = []
    for lib, pr in LIBS:
        m = make(lib, "linear")
        pr.l1_unstructured(m, "weight", amount=2)
        m.register_forward_pre_hook(lambda mod, inp: None)
        pr.l1_unstructured(m, "bias", amount=1)
        pr.l1_unstructured(m, "weight", amount=2)
        orders.append([type(h).__name__ if isinstance(h, pr.BasePruningMethod) else "user"
                       for h in m._forward_pre_hooks.values()])
        pr.remove(m, "bias")
        orders.append([type(h).__name__ if isinstance(h, pr.BasePruningMethod) else "user"
                       for h in m._forward_pre_hooks.values()])
        m(lib.ones(1, 6))
    assert orders[2:] == orders[:2]
    assert orders[0] == ["user", "L1Unstructured", "PruningContainer"]
