"""One runner per model format, so the policy stage is written once.

A runner loads a model file, hands over the layout strings the file declares
(ONNX metadata, or TorchScript extra files), says how wide its input and
output are, and maps one observation row to one action row:
``run(observation: np.ndarray (1, n) float32) -> np.ndarray``.

:class:`OnnxRunner` uses ONNX Runtime. :class:`TorchScriptRunner` uses torch
(an optional extra, ``pip install nexus[torch]``); the observation becomes a
tensor by DLPack, so the NumPy row and the tensor share memory, and the action
comes back the same way. On a CUDA run the module runs on that device and the
row crosses as a Warp array (``wp.to_torch`` and ``wp.from_torch`` use DLPack).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import warp as wp

from nexus.core.errors import BuildError

#: Suffixes read as TorchScript; any other file is read as ONNX.
TORCHSCRIPT_SUFFIXES = (".pt", ".ts", ".torchscript")


def runner_for(path: Path, where: str):
    """The runner for ``path``'s format, by its suffix."""
    if path.suffix.lower() in TORCHSCRIPT_SUFFIXES:
        return TorchScriptRunner(path, where)
    return OnnxRunner(path, where)


class OnnxRunner:
    """An ONNX model in ONNX Runtime on the CPU, one thread (a few hundred multiply-adds: threads only cost)."""

    observation_key, action_key = "nexus:observation", "nexus:action"
    declares = "its metadata has"  # ... no '<key>', in a build error

    def __init__(self, path: Path, where: str):
        import onnxruntime as ort  # noqa: PLC0415  (reason: heavy; loaded only when a policy flies)

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        try:
            self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except Exception as error:  # onnxruntime raises its own types for unreadable files
            raise BuildError(f"{where}: ONNX Runtime cannot load it: {str(error).splitlines()[0]}") from None
        self.metadata = dict(self.session.get_modelmeta().custom_metadata_map)
        (self._input,), (self._output,) = self.session.get_inputs(), self.session.get_outputs()
        self.input_name = self._input.name
        self.input_label = f"the model's input '{self._input.name}'"
        self.output_label = f"the model's output '{self._output.name}'"

    @property
    def input_width(self):
        """The width the model declares for its input (a symbolic width is kept, and does not match)."""
        return self._input.shape[-1]

    def output_width(self, observation_width: int):
        """The width the model declares for its output."""
        return self._output.shape[-1]

    def prepare(self, device: str) -> None:
        """ONNX Runtime runs on the host whatever the flight's device."""

    def run(self, observation: np.ndarray) -> np.ndarray:
        (action,) = self.session.run(None, {self.input_name: observation})
        return np.asarray(action)


class TorchScriptRunner:
    """A TorchScript module; its layouts are the extra files ``nexus_observation`` and ``nexus_action``."""

    observation_key, action_key = "nexus_observation", "nexus_action"
    declares = "its extra files have"

    def __init__(self, path: Path, where: str):
        try:
            import torch  # noqa: PLC0415  (reason: optional, the torch extra; loaded only for a TorchScript policy)
        except ImportError:
            raise BuildError(f"{where}: a TorchScript policy needs torch: pip install torch "
                             "(or pip install nexus[torch]); or export the policy to ONNX") from None
        self.torch, self.where = torch, where
        extra = {self.observation_key: "", self.action_key: ""}
        try:
            with warnings.catch_warnings():  # torch 2.10+ calls TorchScript deprecated; it still loads and runs it
                warnings.simplefilter("ignore", DeprecationWarning)
                self.module = torch.jit.load(str(path), map_location="cpu", _extra_files=extra)
        except Exception as error:  # torch raises RuntimeError or ValueError for files that are not TorchScript
            raise BuildError(f"{where}: torch.jit.load cannot load it: {str(error).splitlines()[0]}") from None
        self.module.eval()
        # torch.jit.load fills in the extra files it finds and leaves the others as given (empty).
        self.metadata = {key: value.decode() if isinstance(value, bytes) else value
                         for key, value in extra.items() if value}
        self.input_label = "the module"
        self.output_label = "the module's output on a zeros observation"
        self.device = "cpu"
        self._wp = None

    @property
    def input_width(self) -> None:
        """TorchScript does not declare its input's width; :meth:`output_width` tries it instead."""
        return None

    def output_width(self, observation_width: int) -> int:
        """The width of the module's output for one zeros observation of ``observation_width`` values."""
        try:
            with self.torch.inference_mode():
                action = self.module(self.torch.zeros((1, observation_width), dtype=self.torch.float32))
        except Exception as error:
            last = [line for line in str(error).splitlines() if line.strip()][-1].strip()
            raise BuildError(f"{self.where}: the module fails on a zeros observation of {observation_width} values "
                             f"(the width of {self.observation_key}): {last}") from None
        return int(action.shape[-1])

    def prepare(self, device: str) -> None:
        """Moves the module to the flight's CUDA device; on the CPU it stays where it was loaded."""
        if device.startswith("cuda"):
            self.device, self._wp = device, wp
            self.module.to(wp.device_to_torch(device))

    def run(self, observation: np.ndarray) -> np.ndarray:
        torch = self.torch
        if self._wp is None:  # the host: the tensor is the NumPy row itself, and so is the action
            with torch.inference_mode():
                action = self.module(torch.from_dlpack(observation))
            return np.from_dlpack(action.detach())
        wp = self._wp  # CUDA: one copy up as a Warp array, shared with torch by DLPack, and one copy down
        with wp.ScopedStream(wp.stream_from_torch(wp.device_to_torch(self.device))), torch.inference_mode():
            row = wp.array(observation, dtype=wp.float32, device=self.device)
            action = self.module(wp.to_torch(row))
            return wp.from_torch(action.detach().contiguous()).numpy()
