"""nn.Module's API against torch.nn.Module: the same module structure is built with both
libraries and the hooks' call orders, arguments and results, and the gradients, compared."""
import pickle
import warnings

import numpy as np
import pytest
import torch

import tessera as ts

LIBS = [torch, ts]


def arr(lib, a, requires_grad=False):
    a = np.asarray(a, dtype=np.float32)
    t = torch.from_numpy(a.copy()) if lib is torch else ts.asarray(a.copy())
    if requires_grad:
        t.requires_grad_(True)
    return t


def val(x):
    """Comparable plain value of a hook argument: tensors as rounded nested lists."""
    if x is None:
        return None
    if isinstance(x, (torch.Tensor, ts.Tensor)):
        return np.round(np.asarray(x.detach().tolist(), dtype=np.float64), 4).tolist()
    if isinstance(x, (tuple, list)):
        return type(x)(val(v) for v in x)
    if isinstance(x, dict):
        return {k: val(v) for k, v in x.items()}
    return x


def linear(lib, n_in=3, n_out=2):
    lin = lib.nn.Linear(n_in, n_out)
    w = np.arange(n_in * n_out, dtype=np.float32).reshape(n_out, n_in) / 10
    lin.load_state_dict({"weight": arr(lib, w), "bias": arr(lib, np.ones(n_out))})
    return lin


def both(build):
    """Runs build(lib, log) for torch and tessera; returns both logs (compared by callers)."""
    logs = []
    for lib in LIBS:
        log = []
        build(lib, log)
        logs.append(val(log))
    return logs


def assert_same(build):
    ref, got = both(build)
    assert got == ref


# ---------------------------------------------------------------------- forward hooks
def test_forward_hooks_order_replace_prepend():
    def build(lib, log):
        lin = linear(lib)
        lin.register_forward_pre_hook(lambda m, a: log.append(("pre1", a)))
        lin.register_forward_pre_hook(lambda m, a: (log.append(("pre2", a)), a[0] * 2)[1])
        lin.register_forward_pre_hook(lambda m, a: log.append(("pre0", a)), prepend=True)
        lin.register_forward_hook(lambda m, a, o: log.append(("fwd1", a, o)))
        lin.register_forward_hook(lambda m, a, o: o + 1)
        lin.register_forward_hook(lambda m, a, o: log.append(("fwd0", a, o)), prepend=True)
        log.append(("out", lin(arr(lib, np.ones((2, 3))))))
    assert_same(build)


def test_forward_hooks_with_kwargs():
    class M:
        pass

    def build(lib, log):
        class Scale(lib.nn.Module):
            def forward(self, x, scale=1.0):
                return x * scale

        m = Scale()
        m.register_forward_pre_hook(lambda mod, a, k: (log.append(("pre", a, k)),
                                                       (a, {"scale": 3.0}))[1], with_kwargs=True)
        m.register_forward_hook(lambda mod, a, k, o: log.append(("fwd", a, k, o)),
                                with_kwargs=True)
        log.append(m(arr(lib, [1.0, 2.0]), scale=2.0))
        bad = m.register_forward_pre_hook(lambda mod, a, k: 5, with_kwargs=True)
        with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
            m(arr(lib, [1.0]))
        bad.remove()
        log.append(m(arr(lib, [1.0])))
    assert_same(build)


def test_forward_hook_always_call_and_removal():
    def build(lib, log):
        class Boom(lib.nn.Module):
            def forward(self, x):
                raise ValueError("boom")

        m = Boom()
        m.register_forward_hook(lambda mod, a, o: log.append(("always", a, o)), always_call=True)
        m.register_forward_hook(lambda mod, a, o: log.append("never"))
        with pytest.raises(ValueError, match="boom"):
            m(arr(lib, [1.0]))
        lin = linear(lib)
        h = lin.register_forward_hook(lambda mod, a, o: log.append("hooked"))
        lin(arr(lib, np.ones(3)))
        h.remove()
        lin(arr(lib, np.ones(3)))
        with lin.register_forward_pre_hook(lambda mod, a: log.append("ctx")):
            lin(arr(lib, np.ones(3)))
        lin(arr(lib, np.ones(3)))
        log.append((len(lin._forward_hooks), len(lin._forward_pre_hooks)))
    assert_same(build)


def test_global_module_hooks():
    def build(lib, log):
        mm = lib.nn.modules.module
        seq = lib.nn.Sequential(linear(lib), lib.nn.ReLU())
        seq[0].register_forward_pre_hook(lambda m, a: log.append(("own-pre", type(m).__name__)))
        seq[0].register_forward_hook(lambda m, a, o: log.append(("own", type(m).__name__)))
        hs = [mm.register_module_forward_pre_hook(
                  lambda m, a: log.append(("gpre", type(m).__name__))),
              mm.register_module_forward_hook(
                  lambda m, a, o: log.append(("g", type(m).__name__, o)))]
        try:
            log.append(seq(arr(lib, [[1.0, -2.0, 3.0]])))
        finally:
            for h in hs:
                h.remove()
        seq(arr(lib, [[1.0, -2.0, 3.0]]))
        # tessera also exports them from nn.modules (torch only from nn.modules.module)
        assert hasattr(ts.nn.modules, "register_module_forward_hook")
    assert_same(build)


# ---------------------------------------------------------------------- backward hooks
def hook_logger(log, tag):
    return lambda m, *grads: log.append((tag, type(m).__name__, grads))


def test_full_backward_hooks_linear_and_gradients():
    def build(lib, log):
        lin = linear(lib)
        lin.register_full_backward_pre_hook(hook_logger(log, "pre"))
        lin.register_full_backward_hook(hook_logger(log, "full"))
        x = arr(lib, np.arange(6).reshape(2, 3), requires_grad=True)
        (lin(x) * arr(lib, [[1.0, 2.0], [3.0, 4.0]])).sum().backward()
        log += [x.grad, lin.weight.grad, lin.bias.grad]
    assert_same(build)


def test_full_backward_hook_multi_input_output():
    """grad_input has one entry per positional argument (None for non-tensors and inputs that
    don't require grad); grad_output one per output."""
    def build(lib, log):
        class Two(lib.nn.Module):
            def forward(self, a, flag, b, c):
                return a * b + c, a - c, 7

        m = Two()
        m.register_full_backward_pre_hook(hook_logger(log, "pre"))
        m.register_full_backward_hook(hook_logger(log, "full"))
        a = arr(lib, [1.0, 2.0], requires_grad=True)
        b = arr(lib, [3.0, 4.0])
        c = arr(lib, [5.0, 6.0], requires_grad=True)
        o1, o2, _ = m(a, "flag", b, c)
        (o1 * 2 + o2 * 3).sum().backward()
        log += [a.grad, c.grad]
        # only the first output used: the second output's gradient is None
        a2 = arr(lib, [1.0, 2.0], requires_grad=True)
        o1, o2, _ = m(a2, None, b, c)
        o1.sum().backward()
        log.append(a2.grad)
    assert_same(build)


def test_backward_hooks_replace_gradients():
    def build(lib, log):
        lin = linear(lib)
        lin.register_full_backward_pre_hook(lambda m, go: (go[0] * 10,))
        lin.register_full_backward_hook(lambda m, gi, go: (log.append(("seen", gi, go)),
                                                           (gi[0] + 1,))[1])
        lin.register_full_backward_hook(lambda m, gi, go: log.append(("after", gi)))
        x = arr(lib, np.ones((2, 3)), requires_grad=True)
        lin(x).sum().backward()
        log += [x.grad, lin.weight.grad, lin.bias.grad]
    assert_same(build)


def test_backward_hook_no_input_requires_grad_and_errors():
    def build(lib, log):
        lin = linear(lib)
        h = lin.register_full_backward_hook(hook_logger(log, "full"))
        lin(arr(lib, np.ones((1, 3)))).sum().backward()
        log.append(lin.weight.grad)
        h.remove()
        lin.register_full_backward_hook(lambda m, gi, go: (arr(lib, [1.0]),))
        with pytest.raises(RuntimeError, match="no input requires gradient"):
            lin(arr(lib, np.ones((1, 3)))).sum().backward()
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks"):
            lin.register_backward_hook(lambda m, gi, go: None)
        lin2 = linear(lib)
        lin2.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
        with pytest.raises(RuntimeError, match="invalid number of grad_input"):
            lin2(arr(lib, np.ones((1, 3)), requires_grad=True)).sum().backward()
        lin3 = linear(lib)
        lin3.register_full_backward_pre_hook(lambda m, go: (go[0], go[0]))
        with pytest.raises(RuntimeError, match="invalid number of grad_output"):
            lin3(arr(lib, np.ones((1, 3)), requires_grad=True)).sum().backward()
    assert_same(build)


def test_deprecated_backward_hook_single_op_module():
    def build(lib, log):
        act = lib.nn.Tanh()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            act.register_backward_hook(hook_logger(log, "bw"))
        x = arr(lib, [0.5, -1.0], requires_grad=True)
        act(x).sum().backward()
        log.append(x.grad)
    assert_same(build)


def test_global_backward_hooks():
    def build(lib, log):
        mm = lib.nn.modules.module
        seq = lib.nn.Sequential(linear(lib), lib.nn.Tanh())
        hs = [mm.register_module_full_backward_pre_hook(hook_logger(log, "gpre")),
              mm.register_module_full_backward_hook(hook_logger(log, "gfull"))]
        try:
            x = arr(lib, np.ones((1, 3)), requires_grad=True)
            seq(x).sum().backward()
        finally:
            for h in hs:
                h.remove()
        log.append(x.grad)
    assert_same(build)


# ---------------------------------------------------------------------- state dict hooks
def test_state_dict_hooks_and_metadata():
    def build(lib, log):
        seq = lib.nn.Sequential(linear(lib), lib.nn.BatchNorm1d(2))
        seq.register_state_dict_pre_hook(lambda m, prefix, keep: log.append(("pre", prefix, keep)))
        seq[1].register_state_dict_pre_hook(lambda m, prefix, keep: log.append(("pre1", prefix)))

        def post(m, sd, prefix, meta):
            log.append(("post", prefix, sorted(sd), meta))
            sd[prefix + "extra"] = arr(lib, [1.0])
        seq[0].register_state_dict_post_hook(post)
        sd = seq.state_dict(keep_vars=True)
        log.append(list(sd))
        log.append(dict(sd._metadata))
        bad = seq.register_state_dict_post_hook(lambda m, sd, p, meta: {})
        with pytest.raises(RuntimeError, match="state_dict post-hook must return None"):
            seq.state_dict()
        bad.remove()
        legacy = seq._register_state_dict_hook(lambda m, sd, p, meta: {"only": 1})
        log.append(seq.state_dict())
        legacy.remove()
        with pytest.raises(RuntimeError, match="Cannot register the same function"):
            seq._register_state_dict_hook(post)
        log.append(seq.state_dict(None, "root.").keys().__len__())
    assert_same(build)


def test_load_state_dict_hooks_and_incompatible_keys():
    def build(lib, log):
        seq = lib.nn.Sequential(linear(lib), linear(lib, 2, 1))
        sd = seq.state_dict()

        def pre(m, state, prefix, meta, strict, missing, unexpected, errors):
            log.append(("pre", type(m).__name__, prefix, sorted(state), meta, strict))

        def post(m, keys):
            log.append(("post", type(m).__name__, list(keys.missing_keys),
                        list(keys.unexpected_keys)))
        seq.register_load_state_dict_pre_hook(pre)
        seq[1].register_load_state_dict_pre_hook(pre)
        seq.register_load_state_dict_post_hook(post)
        seq[1].register_load_state_dict_post_hook(post)
        res = seq.load_state_dict(sd)
        log.append((repr(res), res.missing_keys, res.unexpected_keys))
        partial = {k: v for k, v in sd.items() if k != "1.bias"}
        partial["zzz"] = arr(lib, [1.0])
        res = seq.load_state_dict(partial, strict=False)
        log.append((repr(res), tuple(res)))
        with pytest.raises(RuntimeError) as e:
            seq.load_state_dict(partial)
        log.append(str(e.value))

        def clear(m, keys):
            keys.missing_keys.clear()
            keys.unexpected_keys.clear()
        seq.register_load_state_dict_post_hook(clear)
        log.append(tuple(seq.load_state_dict(partial)))
        with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
            seq.load_state_dict([1, 2])
    assert_same(build)


def test_load_from_state_dict_override_with_version():
    def build(lib, log):
        class Old(lib.nn.Module):
            _version = 2

            def __init__(self):
                super().__init__()
                self.w = lib.nn.Parameter(arr(lib, [0.0, 0.0]))

            def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs):
                log.append(("version", local_metadata.get("version")))
                if local_metadata.get("version", 1) < 2 and prefix + "old_w" in state_dict:
                    state_dict[prefix + "w"] = state_dict.pop(prefix + "old_w")
                super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                              missing_keys, unexpected_keys, error_msgs)

        outer = lib.nn.Sequential(Old())
        sd = outer.state_dict()
        log.append(dict(sd._metadata))
        outer.load_state_dict(sd)
        old = {"0.old_w": arr(lib, [5.0, 6.0])}
        outer.load_state_dict(old)
        log.append(outer[0].w)
    assert_same(build)


def test_extra_state_and_assign():
    def build(lib, log):
        class WithExtra(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.p = lib.nn.Parameter(arr(lib, [1.0]))
                self.register_buffer("b", arr(lib, [2.0]))
                self.note = "init"

            def get_extra_state(self):
                return {"note": self.note}

            def set_extra_state(self, state):
                self.note = state["note"]

        m = WithExtra()
        sd = m.state_dict()
        log.append(sorted(sd))
        sd["_extra_state"] = {"note": "loaded"}
        m.load_state_dict(sd)
        log.append(m.note)
        with pytest.raises(RuntimeError, match='Missing key.*"_extra_state"'):
            m.load_state_dict({"p": arr(lib, [1.0]), "b": arr(lib, [2.0])})
        new_p = arr(lib, [9.0])
        new_b = arr(lib, [8.0])
        m.p.requires_grad_(False)
        m.load_state_dict({"p": new_p, "b": new_b, "_extra_state": {"note": "a"}}, assign=True)
        log.append((isinstance(m.p, lib.nn.Parameter), m.p.requires_grad, m.b is new_b, m.p))
        lin = linear(lib)
        with pytest.raises(RuntimeError, match="size mismatch for weight"):
            lin.load_state_dict({"weight": arr(lib, np.ones((3, 3))), "bias": arr(lib, [0, 0])})
    assert_same(build)


# ---------------------------------------------------------------------- other members
def test_named_members_dedup_and_paths():
    def build(lib, log):
        shared = linear(lib)
        root = lib.nn.Sequential(shared, lib.nn.Sequential(shared, lib.nn.BatchNorm1d(2)))
        log.append([n for n, _ in root.named_modules()])
        log.append([n for n, _ in root.named_modules(remove_duplicate=False)])
        log.append([n for n, _ in root.named_modules(prefix="top")])
        log.append([n for n, _ in root.named_parameters()])
        log.append([n for n, _ in root.named_parameters(remove_duplicate=False)])
        log.append([n for n, _ in root.named_parameters(prefix="p", recurse=False)])
        log.append([n for n, _ in root.named_buffers(remove_duplicate=False)])
        log.append(len(list(root.parameters())))
        log.append([n for n, _ in root.named_children()])
        log.append(root.get_submodule("1.1") is root[1][1])
        log.append(root.get_parameter("1.0.weight") is shared.weight)
        log.append(root.get_buffer("1.1.running_mean"))
        for bad in ("1.nope", "0.weight.x"):
            with pytest.raises(AttributeError):
                root.get_submodule(bad)
        with pytest.raises(AttributeError, match="is not a buffer"):
            root.get_buffer("0.weight")
        with pytest.raises(AttributeError):
            root.get_parameter("1.1.running_mean")
    assert_same(build)


def test_set_submodule_add_module_delattr():
    def build(lib, log):
        root = lib.nn.Sequential(linear(lib), lib.nn.Sequential(lib.nn.ReLU()))
        root.set_submodule("1.0", lib.nn.Tanh())
        root.set_submodule("1.extra", lib.nn.Identity())
        log.append(repr(root))
        with pytest.raises(AttributeError):
            root.set_submodule("1.other", lib.nn.Identity(), strict=True)
        with pytest.raises(ValueError, match="Cannot set the submodule without a target"):
            root.set_submodule("", lib.nn.Identity())
        with pytest.raises(ValueError, match="is not an nn.Module"):
            root.set_submodule("1.0", 3)
        with pytest.raises(AttributeError, match="is not an nn.Module"):
            root.set_submodule("0.weight", lib.nn.Identity())
        root.register_module("late", lib.nn.ReLU())
        del root[0].bias
        del root.late
        log.append([n for n, _ in root.named_parameters()])
        log.append([n for n, _ in root.named_modules()])
    assert_same(build)


def test_modes_conversions_and_misc():
    def build(lib, log):
        root = lib.nn.Sequential(linear(lib), lib.nn.Dropout(0.5))
        log.append(root.train(False) is root)
        log.append([m.training for m in root.modules()])
        log.append(root.train() is root and all(m.training for m in root.modules()))
        with pytest.raises(ValueError, match="training mode is expected to be boolean"):
            root.train(1)
        log.append(root.share_memory() is root)
        log.append(root.compile())
        log.append(root.requires_grad_(False) is root)
        log.append([p.requires_grad for p in root.parameters()])
        root.requires_grad_()
        root(arr(lib, np.ones((1, 3)))).sum().backward()
        root.zero_grad(set_to_none=False)
        log.append([p.grad for p in root.parameters()])
        root.zero_grad()
        log.append([p.grad for p in root.parameters()])
        names = []
        log.append(root.apply(lambda m: names.append(type(m).__name__)) is root)
        log.append(names)
        log.append(root.type(lib.float64) is root)
        log.append([str(p.dtype).split(".")[-1] for p in root.parameters()])
        log.append(str(root.double()[0].weight.dtype).split(".")[-1])
        log.append(str(root.half()[0].weight.dtype).split(".")[-1])
        log.append(str(root.bfloat16()[0].weight.dtype).split(".")[-1])
        log.append(str(root.float()[0].weight.dtype).split(".")[-1])
        emp = root.to_empty(device="cpu")
        log.append((emp is root, [tuple(p.shape) for p in root.parameters()]))
        log.append(root._version)
        log.append("0" in dir(root) and "training" in dir(root))
    assert_same(build)


def test_pickle_roundtrip_keeps_hook_tables():
    lin = ts.nn.Linear(2, 2)
    lin.register_forward_hook(print)
    state = dict(lin.__dict__)
    del state["_forward_hooks_always_called"]
    fresh = ts.nn.Linear.__new__(ts.nn.Linear)
    fresh.__setstate__(state)
    assert fresh._forward_hooks_always_called == {}
    clone = pickle.loads(pickle.dumps(ts.nn.Linear(2, 3)))
    assert tuple(clone(ts.ones((1, 2))).shape) == (1, 3)


def test_batchnorm_version1_state_dict_without_num_batches_tracked():
    def build(lib, log):
        bn = lib.nn.BatchNorm1d(2)
        sd = bn.state_dict()
        log.append(dict(sd._metadata))
        del sd["num_batches_tracked"]
        log.append(tuple(bn.load_state_dict(dict(sd))))  # no metadata: treated as version 1
        sd._metadata[""]["version"] = 2
        with pytest.raises(RuntimeError, match='Missing key.*"num_batches_tracked"'):
            bn.load_state_dict(sd)
    assert_same(build)


def test_to_arguments():
    def build(lib, log):
        lin = linear(lib)
        log.append(lin.to("cpu", lib.float64, False) is lin)
        log.append(str(lin.weight.dtype).split(".")[-1])
        lin.to(device="cpu", dtype=lib.float32, non_blocking=True)
        log.append(str(lin.weight.dtype).split(".")[-1])
        lin.to(arr(lib, [1.0]).to(lib.float64))
        log.append(str(lin.bias.dtype).split(".")[-1])
        with pytest.raises(TypeError, match="only accepts floating point or complex dtypes"):
            lin.to(lib.int32)
    assert_same(build)


@pytest.mark.parametrize("kind", ["module", "parameter", "buffer"])
@pytest.mark.parametrize("name", [3, "a.b", "", "forward"])
def test_registration_name_errors(kind, name):
    def build(lib, log):
        m = lib.nn.Module()
        value = {"module": lib.nn.ReLU(), "parameter": lib.nn.Parameter(arr(lib, [1.0])),
                 "buffer": arr(lib, [1.0])}[kind]
        fn = {"module": m.add_module, "parameter": m.register_parameter,
              "buffer": m.register_buffer}[kind]
        try:
            fn(name, value)
            log.append("ok")
        except (TypeError, KeyError) as e:
            log.append((type(e).__name__, str(e)))
    assert_same(build)


def test_global_forward_hook_kwargs_always_call_and_backward_mixing():
    def build(lib, log):
        mm = lib.nn.modules.module

        class Boom(lib.nn.Module):
            def forward(self, x, k=0):
                if k:
                    raise ValueError("boom")
                return x + k

        # (with_kwargs and always_call together differ: torch's exception path then calls
        # the global hook without kwargs, a TypeError it silences; tessera passes them.)
        hk = mm.register_module_forward_hook(lambda m, a, kw, o: log.append(("kw", a, kw, o)),
                                             with_kwargs=True)
        h = mm.register_module_forward_hook(lambda m, a, o: log.append(("g", a, o)),
                                            always_call=True)
        try:
            m = Boom()
            m(arr(lib, [1.0]), k=0)
            with pytest.raises(ValueError, match="boom"):
                m(arr(lib, [1.0]), k=1)
        finally:
            h.remove()
            hk.remove()
        m(arr(lib, [1.0]))
        h = mm.register_module_full_backward_hook(lambda m, gi, go: None)
        try:
            with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks"):
                mm.register_module_backward_hook(lambda m, gi, go: None)
        finally:
            h.remove()
    assert_same(build)
