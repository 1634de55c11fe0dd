"""``SummaryWriter`` and ``FileWriter`` (torch.utils.tensorboard.writer's API) over the
``tensorboard`` package's event-file writer."""
from __future__ import annotations

import os as _os
import socket as _socket
import time as _time
import typing as _t
from datetime import datetime

if _t.TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Union

from tensorboard.compat.proto import event_pb2 as _event_pb2
from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from . import summary as _summary

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Writes Event protocol buffers to one event file in `log_dir` (asynchronously; queued
    events are written at the latest every `flush_secs` or when `max_queue` are pending)."""

    def __init__(self, log_dir: Union[str, _os.PathLike], max_queue: int = 10,
                 flush_secs: int = 120, filename_suffix: str = "") -> None:
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self) -> str:
        return self.event_writer.get_logdir()

    def add_event(self, event: Event, step: Optional[int] = None,
                  walltime: Optional[float] = None) -> None:
        event.wall_time = _time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary: Any, global_step: Optional[int] = None,
                    walltime: Optional[float] = None) -> None:
        self.add_event(_event_pb2.Event(summary=summary), global_step, walltime)

    def add_graph(self, graph_profile: Any, walltime: Optional[float] = None) -> None:
        """Writes a (GraphDef, RunMetadata) pair: the graph and its step stats."""
        graph, stepstats = graph_profile
        self.add_event(_event_pb2.Event(graph_def=graph.SerializeToString()), None, walltime)
        trm = _event_pb2.TaggedRunMetadata(tag="step1", run_metadata=stepstats.SerializeToString())
        self.add_event(_event_pb2.Event(tagged_run_metadata=trm), None, walltime)

    def flush(self) -> None:
        self.event_writer.flush()

    def close(self) -> None:
        self.event_writer.close()

    def reopen(self) -> None:
        self.event_writer.reopen()


class SummaryWriter:
    """Logs scalars, histograms, images, text, hparams and graphs for TensorBoard.

    Events go to an event file in `log_dir` (default ``runs/<date>_<host><comment>``), written
    asynchronously; ``flush()`` forces them out, ``close()`` (or leaving a ``with`` block) ends
    the file. Values may be tessera tensors, NumPy arrays or Python numbers.
    """

    def __init__(self, log_dir: Optional[Union[str, _os.PathLike]] = None, comment: str = "",
                 purge_step: Optional[int] = None, max_queue: int = 10, flush_secs: int = 120,
                 filename_suffix: str = "") -> None:
        if not log_dir:
            current_time = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = _os.path.join("runs", current_time + "_" + _socket.gethostname() + comment)
        self.log_dir = str(log_dir)
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer: Optional[FileWriter] = None
        self.all_writers: Optional[Dict[str, FileWriter]] = None
        self._get_file_writer()
        # TensorFlow's default histogram buckets (what torch uses for bins="tensorflow")
        v, buckets = 1e-12, []
        while v < 1e20:
            buckets.append(v)
            v *= 1.1
        self.default_bins: List[float] = [-b for b in buckets[::-1]] + [0.0] + buckets

    def _get_file_writer(self) -> FileWriter:
        """The default FileWriter, recreated if the writer was closed."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs,
                                          self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                self.file_writer.add_event(Event(step=self.purge_step, file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=self.purge_step,
                                                 session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str:
        """The directory event files are written to."""
        return self.log_dir

    def add_scalar(self, tag: str, scalar_value: Any, global_step: Optional[int] = None,
                   walltime: Optional[float] = None, new_style: bool = False,
                   double_precision: bool = False) -> None:
        """Logs one number (a Python number or a one-element tensor) under `tag`."""
        self._get_file_writer().add_summary(
            _summary.scalar(tag, scalar_value, double_precision, new_style), global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: Dict[str, Any],
                    global_step: Optional[int] = None, walltime: Optional[float] = None) -> None:
        """Logs several numbers on one chart: each goes to its own run, ``<log_dir>/<main_tag>_<tag>``."""
        fw_logdir = self._get_file_writer().get_logdir()
        assert self.all_writers is not None
        for tag, value in tag_scalar_dict.items():
            fw_tag = fw_logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            fw = self.all_writers.get(fw_tag)
            if fw is None:
                fw = FileWriter(fw_tag, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[fw_tag] = fw
            fw.add_summary(_summary.scalar(main_tag, value), global_step, walltime)

    def add_histogram(self, tag: str, values: Any, global_step: Optional[int] = None,
                      bins: Any = "tensorflow", walltime: Optional[float] = None,
                      max_bins: Optional[int] = None) -> None:
        """Logs the histogram of `values` (any shape). `bins` is NumPy's (an int, edges, or a
        method name such as "auto"); "tensorflow" uses TensorFlow's exponential buckets."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._get_file_writer().add_summary(
            _summary.histogram(tag, values, bins, max_bins), global_step, walltime)

    def add_histogram_raw(self, tag: str, min: float, max: float, num: int, sum: float,
                          sum_squares: float, bucket_limits: Any, bucket_counts: Any,
                          global_step: Optional[int] = None,
                          walltime: Optional[float] = None) -> None:
        """Logs a histogram from precomputed statistics (bucket_limits are right edges)."""
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        self._get_file_writer().add_summary(
            _summary.histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits,
                                   bucket_counts), global_step, walltime)

    def add_image(self, tag: str, img_tensor: Any, global_step: Optional[int] = None,
                  walltime: Optional[float] = None, dataformats: str = "CHW") -> None:
        """Logs one image: shape (3, H, W) by default (see `dataformats`); floats in [0, 1],
        uint8 in [0, 255]."""
        self._get_file_writer().add_summary(
            _summary.image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_images(self, tag: str, img_tensor: Any, global_step: Optional[int] = None,
                   walltime: Optional[float] = None, dataformats: str = "NCHW") -> None:
        """Logs a batch of images (N, C, H, W), tiled into one grid of up to 8 columns."""
        self._get_file_writer().add_summary(
            _summary.image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_figure(self, tag: str, figure: Any, global_step: Optional[int] = None,
                   close: bool = True, walltime: Optional[float] = None) -> None:
        """Logs a matplotlib figure (or a list of them, as a grid) as an image."""
        import numpy as np
        if isinstance(figure, list):
            imgs = np.stack([_summary.figure_to_image(f, close) for f in figure])
            self.add_image(tag, imgs, global_step, walltime, dataformats="NCHW")
        else:
            self.add_image(tag, _summary.figure_to_image(figure, close), global_step, walltime,
                           dataformats="CHW")

    def add_text(self, tag: str, text_string: str, global_step: Optional[int] = None,
                 walltime: Optional[float] = None) -> None:
        """Logs a (markdown) string."""
        self._get_file_writer().add_summary(_summary.text(tag, text_string), global_step, walltime)

    def add_hparams(self, hparam_dict: Dict[str, Any], metric_dict: Dict[str, Any],
                    hparam_domain_discrete: Optional[Dict[str, List[Any]]] = None,
                    run_name: Optional[str] = None, global_step: Optional[int] = None) -> None:
        """Logs one trial's hyperparameters with its final metrics (the HParams dashboard), in
        the run ``<log_dir>/<run_name>`` (default: the current time)."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        exp, ssi, sei = _summary.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        if not run_name:
            run_name = str(_time.time())
        logdir = _os.path.join(self._get_file_writer().get_logdir(), run_name)
        with SummaryWriter(log_dir=logdir) as w_hp:
            fw = w_hp._get_file_writer()
            fw.add_summary(exp, global_step)
            fw.add_summary(ssi, global_step)
            fw.add_summary(sei, global_step)
            for k, v in metric_dict.items():
                w_hp.add_scalar(k, v, global_step)

    def add_graph(self, model: Any, input_to_model: Any = None, verbose: bool = False,
                  use_strict_trace: bool = True) -> None:
        """Logs the op graph of ``model(*input_to_model)`` (its autograd graph, nodes grouped
        by module); see ``tessera.utils.tensorboard.graph``."""
        from .graph import graph
        self._get_file_writer().add_graph(graph(model, input_to_model))

    def add_custom_scalars(self, layout: Dict[str, Dict[str, List[Any]]]) -> None:
        """Declares custom-scalar charts: {category: {chart: ["Multiline", [tags]] or
        ["Margin", [value, lower, upper]]}}."""
        self._get_file_writer().add_summary(_summary.custom_scalars(layout))

    def flush(self) -> None:
        """Writes every pending event to disk."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self) -> None:
        """Flushes and closes every event file (a second close is a no-op)."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self) -> "SummaryWriter":
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        self.close()
