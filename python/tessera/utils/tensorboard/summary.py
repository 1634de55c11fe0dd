"""Summary protocol buffers for TensorBoard, built from tessera tensors, NumPy arrays or numbers
(the formats torch.utils.tensorboard writes, so TensorBoard and its EventAccumulator read them)."""
from __future__ import annotations

import io as _io
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence

import numpy as _np
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData


def make_np(x: Any) -> _np.ndarray:
    """A tensor, array, list or number as a NumPy array (detached, on the CPU)."""
    from ..._C import Tensor
    if isinstance(x, Tensor):
        return _np.asarray(x.detach().cpu())
    if isinstance(x, _np.ndarray):
        return x
    if isinstance(x, (int, float, bool, _np.number, _np.bool_)):
        return _np.array([x])
    if isinstance(x, (list, tuple)):
        return _np.asarray(x)
    raise NotImplementedError(f"tensorboard: got {type(x).__name__}, but expected a number, "
                              "a NumPy array or a tessera Tensor")


def scalar(name: str, value: Any, double_precision: bool = False, new_style: bool = False) -> Summary:
    """A scalar summary (``simple_value``; ``new_style`` writes a scalars-plugin tensor)."""
    arr = make_np(value).squeeze()
    if arr.ndim != 0:
        raise ValueError(f"add_scalar: expected a scalar value (one element), got shape {arr.shape}")
    v = float(arr)
    if new_style:
        dtype = "DT_DOUBLE" if double_precision else "DT_FLOAT"
        tp = TensorProto(dtype=dtype, tensor_shape=TensorShapeProto())
        if double_precision:
            tp.double_val.append(v)
        else:
            tp.float_val.append(v)
        smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
        return Summary(value=[Summary.Value(tag=name, tensor=tp, metadata=smd)])
    return Summary(value=[Summary.Value(tag=name, simple_value=v)])


def make_histogram(values: _np.ndarray, bins: Any, max_bins: Optional[int] = None) -> HistogramProto:
    """A HistogramProto of `values` (NumPy's binning; TensorBoard stores right bin edges)."""
    values = _np.asarray(values, dtype=_np.float64).reshape(-1)
    if values.size == 0:
        raise ValueError("add_histogram: the input has no element")
    counts, limits = _np.histogram(values, bins=bins)
    num_bins = len(counts)
    if max_bins is not None and num_bins > max_bins:
        sub = num_bins // max_bins
        rem = num_bins % sub
        if rem != 0:
            counts = _np.pad(counts, pad_width=[[0, sub - rem]], mode="constant")
        counts = counts.reshape(-1, sub).sum(axis=-1)
        new_limits = _np.empty((counts.size + 1,), limits.dtype)
        new_limits[:-1] = limits[:-1:sub]
        new_limits[-1] = limits[-1]
        limits = new_limits
    cum = _np.cumsum(_np.greater(counts, 0))
    start, end = _np.searchsorted(cum, [0, cum[-1] - 1], side="right")
    start, end = int(start), int(end) + 1
    counts = counts[start - 1:end] if start > 0 else _np.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    return HistogramProto(min=values.min(), max=values.max(), num=len(values), sum=values.sum(),
                          sum_squares=values.dot(values), bucket_limit=limits.tolist(),
                          bucket=counts.tolist())


def histogram(name: str, values: Any, bins: Any, max_bins: Optional[int] = None) -> Summary:
    return Summary(value=[Summary.Value(tag=name, histo=make_histogram(make_np(values), bins, max_bins))])


def histogram_raw(name: str, min: float, max: float, num: int, sum: float, sum_squares: float,
                  bucket_limits: Sequence[float], bucket_counts: Sequence[float]) -> Summary:
    hist = HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares,
                          bucket_limit=list(bucket_limits), bucket=list(bucket_counts))
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


def make_grid(images: _np.ndarray, ncols: int = 8) -> _np.ndarray:
    """N images (N, C, H, W), C in {1, 3, 4}, tiled into one (C', H * rows, W * cols) canvas."""
    if images.shape[1] == 1:
        images = _np.concatenate([images] * 3, 1)
    if images.ndim != 4 or images.shape[1] not in (3, 4):
        raise ValueError(f"add_images: expected N images of 1, 3 or 4 channels, got shape "
                         f"{images.shape}")
    n, c, h, w = images.shape
    ncols = max(min(n, ncols), 1)
    nrows = -(-n // ncols)
    canvas = _np.zeros((c, h * nrows, w * ncols), dtype=images.dtype)
    for i in range(n):
        y, x = divmod(i, ncols)
        canvas[:, y * h:(y + 1) * h, x * w:(x + 1) * w] = images[i]
    return canvas


def convert_to_hwc(array: _np.ndarray, dataformats: str) -> _np.ndarray:
    """An image array in `dataformats` (e.g. "CHW", "HWC", "HW", "NCHW") as (H, W, C)."""
    fmt = dataformats.upper()
    if len(set(fmt)) != len(fmt) or not set(fmt) <= set("NCHW"):
        raise ValueError(f"add_image: dataformats {dataformats!r} must use each of N, C, H, W "
                         "at most once")
    if array.ndim != len(fmt):
        raise ValueError(f"add_image: the image has {array.ndim} dims (shape {array.shape}) but "
                         f"dataformats {dataformats!r} names {len(fmt)}")
    if len(fmt) == 4:
        return make_grid(array.transpose([fmt.find(c) for c in "NCHW"])).transpose(1, 2, 0)
    if len(fmt) == 3:
        hwc = array.transpose([fmt.find(c) for c in "HWC"])
        return _np.concatenate([hwc] * 3, 2) if hwc.shape[2] == 1 else hwc
    if fmt in ("HW", "WH"):
        return _np.stack([array.transpose([fmt.find(c) for c in "HW"])] * 3, 2)
    raise ValueError(f"add_image: unsupported dataformats {dataformats!r}")


def image(tag: str, tensor: Any, rescale: float = 1, dataformats: str = "NCHW") -> Summary:
    """An image summary: float images are taken in [0, 1], uint8 ones in [0, 255]; PNG-encoded."""
    arr = convert_to_hwc(make_np(tensor), dataformats)
    scale = 1 if arr.dtype == _np.uint8 else 255
    arr = (arr.astype(_np.float32) * scale).clip(0, 255).astype(_np.uint8)
    return Summary(value=[Summary.Value(tag=tag, image=make_image(arr, rescale))])


def make_image(arr: _np.ndarray, rescale: float = 1) -> Summary.Image:
    try:
        from PIL import Image
    except ImportError as e:  # pragma: no cover
        raise ImportError("add_image needs the 'pillow' package: pip install pillow") from e
    height, width, channel = arr.shape
    img = Image.fromarray(arr)
    if rescale != 1:
        img = img.resize((int(width * rescale), int(height * rescale)), Image.Resampling.LANCZOS)
    out = _io.BytesIO()
    img.save(out, format="PNG")
    return Summary.Image(height=height, width=width, colorspace=channel,
                         encoded_image_string=out.getvalue())


def figure_to_image(figure: Any, close: bool = True) -> _np.ndarray:
    """A matplotlib figure rendered to an (C, H, W) uint8 array."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    rgba = _np.asarray(canvas.buffer_rgba())
    if close:
        import matplotlib.pyplot as plt
        plt.close(figure)
    return _np.ascontiguousarray(rgba[:, :, :3].transpose(2, 0, 1))


def text(tag: str, text_string: str) -> Summary:
    smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name="text", content=TextPluginData(version=0).SerializeToString()))
    tensor = TensorProto(dtype="DT_STRING", string_val=[text_string.encode("utf_8")],
                         tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=smd, tensor=tensor)])


def custom_scalars(layout: Dict[str, Dict[str, List[Any]]]) -> Summary:
    from tensorboard.plugins.custom_scalar import layout_pb2
    categories = []
    for title, charts in layout.items():
        cs = []
        for chart_name, (kind, tags) in charts.items():
            if kind == "Multiline":
                chart = layout_pb2.Chart(title=chart_name,
                                         multiline=layout_pb2.MultilineChartContent(tag=tags))
            else:
                series = [layout_pb2.MarginChartContent.Series(value=tags[0], lower=tags[1],
                                                               upper=tags[2])]
                chart = layout_pb2.Chart(title=chart_name,
                                         margin=layout_pb2.MarginChartContent(series=series))
            cs.append(chart)
        categories.append(layout_pb2.Category(title=title, chart=cs))
    content = layout_pb2.Layout(category=categories)
    smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name="custom_scalars"))
    tensor = TensorProto(dtype="DT_STRING", string_val=[content.SerializeToString()],
                         tensor_shape=TensorShapeProto())
    return Summary(value=[Summary.Value(tag="custom_scalars__config__", tensor=tensor,
                                        metadata=smd)])


def hparams(hparam_dict: Dict[str, Any], metric_dict: Dict[str, Any],
            hparam_domain_discrete: Optional[Dict[str, List[Any]]] = None) -> Any:
    """The three summaries of the hparams plugin: experiment, session start, session end."""
    from google.protobuf import struct_pb2
    from tensorboard.plugins.hparams.api_pb2 import (DataType, Experiment, HParamInfo,
                                                      MetricInfo, MetricName, Status)
    from tensorboard.plugins.hparams.metadata import (EXPERIMENT_TAG, PLUGIN_DATA_VERSION,
                                                      PLUGIN_NAME, SESSION_END_INFO_TAG,
                                                      SESSION_START_INFO_TAG)
    from tensorboard.plugins.hparams.plugin_data_pb2 import (HParamsPluginData, SessionEndInfo,
                                                              SessionStartInfo)
    from ..._C import Tensor

    if not isinstance(hparam_dict, dict):
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    domains = hparam_domain_discrete or {}
    if not isinstance(domains, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in domains.items():
        if k not in hparam_dict or not isinstance(v, list) or \
                not all(isinstance(d, type(hparam_dict[k])) for d in v):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same "
                            f"type as hparam_dict[{k}].")

    def domain(k: str, field: str) -> Any:
        if k not in domains:
            return None
        return struct_pb2.ListValue(values=[struct_pb2.Value(**{field: d}) for d in domains[k]])

    hps = []
    ssi = SessionStartInfo()
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if isinstance(v, bool):  # before int: a bool is an int in Python
            ssi.hparams[k].bool_value = v
            hps.append(HParamInfo(name=k, type=DataType.Value("DATA_TYPE_BOOL"),
                                  domain_discrete=domain(k, "bool_value")))
        elif isinstance(v, (int, float)):
            ssi.hparams[k].number_value = v
            hps.append(HParamInfo(name=k, type=DataType.Value("DATA_TYPE_FLOAT64"),
                                  domain_discrete=domain(k, "number_value")))
        elif isinstance(v, str):
            ssi.hparams[k].string_value = v
            hps.append(HParamInfo(name=k, type=DataType.Value("DATA_TYPE_STRING"),
                                  domain_discrete=domain(k, "string_value")))
        elif isinstance(v, Tensor):
            ssi.hparams[k].number_value = float(make_np(v).reshape(-1)[0])
            hps.append(HParamInfo(name=k, type=DataType.Value("DATA_TYPE_FLOAT64")))
        else:
            raise ValueError("value should be one of int, float, str, bool, or tessera.Tensor")

    def wrap(tag: str, content: HParamsPluginData) -> Summary:
        smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
            plugin_name=PLUGIN_NAME, content=content.SerializeToString()))
        return Summary(value=[Summary.Value(tag=tag, metadata=smd)])

    exp = Experiment(hparam_infos=hps, metric_infos=[MetricInfo(name=MetricName(tag=k))
                                                     for k in metric_dict])
    return (wrap(EXPERIMENT_TAG, HParamsPluginData(experiment=exp, version=PLUGIN_DATA_VERSION)),
            wrap(SESSION_START_INFO_TAG, HParamsPluginData(session_start_info=ssi,
                                                           version=PLUGIN_DATA_VERSION)),
            wrap(SESSION_END_INFO_TAG, HParamsPluginData(
                session_end_info=SessionEndInfo(status=Status.Value("STATUS_SUCCESS")),
                version=PLUGIN_DATA_VERSION)))

