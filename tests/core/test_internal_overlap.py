"""In-place writes into a tensor whose elements share memory (an expanded tensor: a dim of
size > 1 with stride 0), against torch: computed writes raise PyTorch's RuntimeError, fill_ and
zero_ write every element, index_put_ / masked_fill_ / index_fill_ warn (deprecated) and write."""
import warnings

import pytest
import torch

import tessera as ts

MSG = ("unsupported operation: more than one element of the written-to tensor refers to a "
       "single memory location. Please clone() the tensor before performing the operation.")


def expanded(lib):
    return lib.zeros(1).expand(3)


def ones3(lib):
    return lib.ones(3)


# method name -> a write into the expanded tensor t (lib is torch or tessera)
RAISING = {
    "add_": lambda lib, t: t.add_(1),
    "add_tensor": lambda lib, t: t.add_(ones3(lib)),
    "sub_": lambda lib, t: t.sub_(1),
    "mul_": lambda lib, t: t.mul_(2),
    "div_": lambda lib, t: t.div_(2),
    "pow_": lambda lib, t: t.pow_(2),
    "exp_": lambda lib, t: t.exp_(),
    "log_": lambda lib, t: t.log_(),
    "sqrt_": lambda lib, t: t.sqrt_(),
    "neg_": lambda lib, t: t.neg_(),
    "abs_": lambda lib, t: t.abs_(),
    "clamp_": lambda lib, t: t.clamp_(0, 1),
    "sigmoid_": lambda lib, t: t.sigmoid_(),
    "relu_": lambda lib, t: t.relu_(),
    "tanh_": lambda lib, t: t.tanh_(),
    "copy_": lambda lib, t: t.copy_(lib.tensor([1.0, 2.0, 3.0])),
    "copy_scalar_tensor": lambda lib, t: t.copy_(lib.tensor(4.0)),
    "uniform_": lambda lib, t: t.uniform_(),
    "normal_": lambda lib, t: t.normal_(),
    "bernoulli_": lambda lib, t: t.bernoulli_(0.5),
    "exponential_": lambda lib, t: t.exponential_(),
    "lerp_": lambda lib, t: t.lerp_(ones3(lib), 0.5),
    "addcmul_": lambda lib, t: t.addcmul_(ones3(lib), ones3(lib)),
    "mul_out": lambda lib, t: lib.mul(ones3(lib), 2, out=t),
    "scatter_": lambda lib, t: t.scatter_(0, lib.tensor([0]), lib.tensor([3.0])),
    "scatter_add_": lambda lib, t: t.scatter_add_(0, lib.tensor([0]), lib.tensor([3.0])),
    "index_add_": lambda lib, t: t.index_add_(0, lib.tensor([0]), lib.tensor([3.0])),
    "index_copy_": lambda lib, t: t.index_copy_(0, lib.tensor([0]), lib.tensor([3.0])),
    "masked_scatter_": lambda lib, t: t.masked_scatter_(lib.tensor([True, False, False]),
                                                        lib.tensor([3.0])),
}


@pytest.mark.parametrize("name", sorted(RAISING))
def test_write_into_expanded_raises_like_torch(name):
    f = RAISING[name]
    with pytest.raises(RuntimeError) as te:
        f(torch, expanded(torch))
    assert MSG in str(te.value)
    with pytest.raises(RuntimeError) as xe:
        f(ts, expanded(ts))
    assert MSG in str(xe.value)
    assert "shape (3,)" in str(xe.value)


def test_message_names_the_method():
    with pytest.raises(RuntimeError, match=r"^exp_: unsupported operation"):
        expanded(ts).exp_()
    with pytest.raises(RuntimeError, match=r"^copy_: unsupported operation"):
        expanded(ts).copy_(ts.ones(3))
    with pytest.raises(RuntimeError, match=r"^uniform_: unsupported operation"):
        expanded(ts).uniform_()


def test_expanded_2d_raises():
    for lib in (torch, ts):
        t = lib.zeros(3, 1).expand(3, 4)
        with pytest.raises(RuntimeError, match="more than one element"):
            t.add_(1)


@pytest.mark.parametrize("lib", [torch, ts], ids=["torch", "tessera"])
def test_not_refused_when_no_dim_is_shared(lib):
    # a stride-0 dim of size 1 shares nothing; x.copy_(x) is a no-op
    t = lib.zeros(1).as_strided((1,), (0,))
    t.add_(1)
    assert t.tolist() == [1.0]
    e = expanded(lib)
    e.copy_(e)
    assert e.tolist() == [0.0, 0.0, 0.0]
    # a transposed (dense) tensor is written normally
    m = lib.zeros(2, 3).t()
    m.add_(1)
    assert m.tolist() == [[1.0, 1.0]] * 3


@pytest.mark.parametrize("name", ["fill_", "zero_"])
def test_fill_and_zero_write_every_element(name):
    for lib in (torch, ts):
        t = lib.full((1,), 7.0).expand(3)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            getattr(t, name)(*([2.0] if name == "fill_" else []))
        assert t.tolist() == ([2.0] * 3 if name == "fill_" else [0.0] * 3)


DEPRECATED = {
    "index_put_": lambda lib, t: t.index_put_((lib.tensor([0]),), lib.tensor(5.0)),
    "masked_fill_": lambda lib, t: t.masked_fill_(lib.tensor([True, False, False]), 5.0),
    "index_fill_": lambda lib, t: t.index_fill_(0, lib.tensor([0]), 5.0),
}


@pytest.mark.parametrize("name", sorted(DEPRECATED))
def test_index_writes_warn_and_write_like_torch(name):
    f = DEPRECATED[name]
    got = {}
    for lib in (torch, ts):
        t = expanded(lib)
        with pytest.warns(UserWarning, match=f"Use of {name} on expanded tensors is deprecated"):
            f(lib, t)
        got[lib] = t.tolist()
    assert got[ts] == got[torch] == [5.0, 5.0, 5.0]


@pytest.mark.parametrize("key", [slice(0, 2), Ellipsis], ids=["slice", "ellipsis"])
def test_setitem_into_expanded_view_raises_like_torch(key):
    for lib in (torch, ts):
        with pytest.raises(RuntimeError, match="more than one element of the written-to"):
            expanded(lib)[key] = 7.0


def test_setitem_into_one_element_of_expanded_writes_like_torch():
    got = {}
    for lib in (torch, ts):
        t = expanded(lib)
        t[1] = 7.0
        got[lib] = t.tolist()
    assert got[ts] == got[torch] == [7.0, 7.0, 7.0]


def test_setitem_with_tensor_index_warns_and_writes_like_torch():
    got = {}
    for lib in (torch, ts):
        t = lib.arange(4.0).reshape(1, 4).expand(3, 4)
        with pytest.warns(UserWarning, match="Use of index_put_ on expanded tensors"):
            t[lib.tensor([2]), lib.tensor([1])] = 9.0
        got[lib] = t.tolist()
    assert got[ts] == got[torch]


def _warned(f):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        f()
    return [str(x.message).split(" on ")[0] for x in w if x.category is UserWarning]


@pytest.mark.parametrize("call", [
    lambda m, t, mk: t.__setitem__(mk, 1.0),  # one bool mask, a number: index_put_ + masked_fill_
    lambda m, t, mk: t.__setitem__(mk, m.tensor(2.0)),
    lambda m, t, mk: t.__setitem__(mk[:, 0], 1.0),
    lambda m, t, mk: t.__setitem__(mk, m.ones(int(mk.sum()))),  # a vector value: index_put_ only
    lambda m, t, mk: t.index_put_((mk,), m.tensor(3.0)),
    lambda m, t, mk: t.__setitem__(m.tensor([0]), 1.0),
])
def test_setitem_warnings_on_expanded_match_torch(call):
    got = {}
    for lib in (torch, ts):
        t = lib.arange(4.0).reshape(1, 4).expand(3, 4)
        mk = lib.tensor([[True, False, False, True], [False] * 4, [True] * 4])
        got[lib] = (_warned(lambda: call(lib, t, mk)), t.tolist())
    assert got[ts] == got[torch]


@pytest.mark.parametrize("rows", [[0], [2], [0, 2]])
def test_masked_fill_2d_expanded_matches_torch(rows):
    got = {}
    for lib in (torch, ts):
        t = lib.arange(4.0).reshape(1, 4).expand(3, 4)
        mask = lib.zeros(3, 4, dtype=lib.bool)
        for r in rows:
            mask[r, r % 4] = True
        with pytest.warns(UserWarning, match="masked_fill_ on expanded tensors"):
            t.masked_fill_(mask, -1.0)
        got[lib] = t.tolist()
    assert got[ts] == got[torch]


def test_index_writes_on_plain_tensor_do_not_warn():
    for lib in (torch, ts):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for f in DEPRECATED.values():
                t = lib.zeros(3)
                f(lib, t)
                assert t.tolist() == [5.0, 0.0, 0.0]
