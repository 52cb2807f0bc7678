# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""One interface for every image classifier: transformers models, timm models, builtin models, any nn.Module.

A `Classifier` takes float pixels in [0, 1] at its input size and returns logits. Mean/std normalisation
happens inside `forward` (as buffers), so every probe perturbs images in the same pixel space whatever
the model, and the perturbation budgets (an L-inf epsilon of 4/255, a blur sigma) mean the same thing for
a ViT and a CNN. `Preprocessing` (`preprocessing.py`) turns PIL images of any mode into those pixels.

`load_classifier(spec)` (`loading.py`) builds one from a transformers folder or Hub id, `timm/<name>`,
`builtin:<name>`, or an in-memory module; it stays importable from here.
"""

import contextlib
import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import torch
from PIL import Image
from torch import nn
from transformers import PreTrainedModel

from .attention_paths import differentiable_attention
from .imagenet import IMAGENET_WNIDS, is_imagenet_1k
from .preprocessing import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, Preprocessing, _pair
from .residual_units import (
    ResidualSum,
    ResidualUnit,
    find_residual_sums,
    find_residual_units,
    lesioned,
    recording_residual_sums,
)


class TopK(NamedTuple):
    """Top-k predictions of a batch: probabilities and class indices (N, k), and the class names."""

    probabilities: torch.Tensor
    indices: torch.Tensor
    labels: list[list[str]]


def _detect_kind(module: nn.Module) -> str:
    if isinstance(module, PreTrainedModel):
        return "transformers"
    if type(module).__module__.startswith("timm."):
        return "timm"
    return "module"


def _first_tensor(output: Any) -> torch.Tensor | None:
    if isinstance(output, torch.Tensor):
        return output
    if isinstance(output, Mapping):
        output = tuple(output.values())
    if isinstance(output, tuple | list):
        for item in output:
            if isinstance(item, torch.Tensor):
                return item
    return None


class Classifier(nn.Module):
    """Any image classifier behind one interface: float pixels in [0, 1] (N, 3, H, W) -> logits (N, classes).

    The wrapped `module` receives `(pixels - mean) / std`; mean and std are buffers, so `.to(device)` moves
    them with the model. Besides `forward`, it exposes intermediate feature maps and, where the
    architecture has them, attention maps, for every backend (transformers, timm, plain modules).

    Args:
        module: the classifier; a transformers `PreTrainedModel` is called as `module(pixel_values=x)`,
            anything else as `module(x)`, and the logits are `output.logits`, the tensor itself, or the first
            tensor of a tuple.
        preprocessing: how PIL images become this model's input.
        id2label: class index -> name; when omitted, `module.config.id2label` or "LABEL_i".
        name: a short display name; spec: how it was loaded (for reports).
        stored_dtype: the dtype its weights were stored in ("bfloat16", "bfloat16+float32" when mixed; None when
            not known or not loaded from files); `dtype` is the one it runs in (`load_classifier`: float32 unless
            asked).
    """

    def __init__(
        self,
        module: nn.Module,
        preprocessing: Preprocessing,
        id2label: Mapping[int, str] | None = None,
        name: str | None = None,
        spec: str | None = None,
        stored_dtype: str | None = None,
    ) -> None:
        super().__init__()
        if not isinstance(module, nn.Module):
            raise TypeError(f"module must be a torch.nn.Module, got {type(module).__name__}.")
        if not isinstance(preprocessing, Preprocessing):
            raise TypeError(f"preprocessing must be a Preprocessing, got {type(preprocessing).__name__}.")
        self.module = module
        self.preprocessing = preprocessing
        self.kind = _detect_kind(module)
        self.name = name or type(module).__name__
        self.spec = spec or f"module:{type(module).__name__}"
        self.stored_dtype = stored_dtype
        first = next(itertools.chain(module.parameters(), module.buffers()), None)
        device = first.device if first is not None else torch.device("cpu")
        mean = torch.tensor(preprocessing.mean, device=device).view(1, 3, 1, 1)
        std = torch.tensor(preprocessing.std, device=device).view(1, 3, 1, 1)
        self.register_buffer("mean", mean, persistent=False)
        self.register_buffer("std", std, persistent=False)
        self._layer_names: list[str] | None = None
        self._has_attention: bool | None = None
        # input size -> whether the model runs at it (`accepts_input_size`)
        self._accepted_sizes: dict[tuple[int, int], bool] = {}
        if id2label is None:
            config_labels = getattr(getattr(module, "config", None), "id2label", None)
            if config_labels:
                id2label = config_labels
            else:
                num_classes = self._infer_num_classes()
                id2label = {i: f"LABEL_{i}" for i in range(num_classes)}
        self.id2label: dict[int, str] = {int(k): str(v) for k, v in id2label.items()}
        if sorted(self.id2label) != list(range(len(self.id2label))):
            raise ValueError("id2label keys must be 0..num_classes-1.")
        self.wnids: list[str] | None = list(IMAGENET_WNIDS) if is_imagenet_1k(self.id2label) else None

    # ------------------------------------------------------------------ basics
    @property
    def num_classes(self) -> int:
        return len(self.id2label)

    @property
    def input_size(self) -> tuple[int, int]:
        return self.preprocessing.input_size

    @property
    def device(self) -> torch.device:
        return self.mean.device

    @property
    def dtype(self) -> torch.dtype:
        """The floating dtype of the wrapped model's parameters (float32 for parameter-free modules)."""
        for param in self.module.parameters():
            if param.is_floating_point():
                return param.dtype
        return torch.float32

    def extra_repr(self) -> str:
        return f"name={self.name!r}, input_size={self.input_size}, num_classes={self.num_classes}"

    def _check_pixels(self, pixels: torch.Tensor) -> None:
        if not isinstance(pixels, torch.Tensor):
            raise TypeError(f"{self.name}: expected a torch.Tensor of pixels, got {type(pixels).__name__}.")
        if pixels.ndim != 4:
            hint = " (add a batch dimension with pixels.unsqueeze(0))" if pixels.ndim == 3 else ""
            raise ValueError(
                f"{self.name}: expected pixels of shape (N, 3, H, W), got {tuple(pixels.shape)}{hint}."
            )
        if pixels.shape[1] != 3:
            raise ValueError(
                f"{self.name}: expected 3 channels (RGB) in dim 1, got shape {tuple(pixels.shape)}."
            )
        if not pixels.is_floating_point():
            raise ValueError(
                f"{self.name}: expected float pixels in [0, 1], got dtype {pixels.dtype} "
                "(use classifier.preprocess(images), or pixels.float() / 255 for uint8)."
            )
        if tuple(pixels.shape[-2:]) != self.input_size:
            raise ValueError(
                f"{self.name}: expected spatial size {self.input_size}, got {tuple(pixels.shape[-2:])} "
                "(use classifier.preprocess(images) to resize and crop)."
            )
        if pixels.device != self.mean.device:
            raise ValueError(
                f"{self.name}: pixels are on {pixels.device} but the model is on {self.mean.device}."
            )

    def _normalize(self, pixels: torch.Tensor) -> torch.Tensor:
        self._check_pixels(pixels)
        return self._normalize_unchecked(pixels)

    def _call(self, inputs: torch.Tensor, **flags: bool) -> Any:
        if self.kind == "transformers":
            return self.module(pixel_values=inputs, **flags)
        return self.module(inputs)

    def _logits(self, output: Any) -> torch.Tensor:
        logits = getattr(output, "logits", None)
        if logits is None:
            logits = _first_tensor(output)
        if logits is None or logits.ndim != 2:
            shape = None if logits is None else tuple(logits.shape)
            raise ValueError(
                f"{self.name}: the model did not return logits of shape (N, classes), got {shape}."
            )
        return logits

    def _dummy_pixels(self) -> torch.Tensor:
        return torch.zeros(1, 3, *self.input_size, device=self.mean.device)

    @contextlib.contextmanager
    def _probing(self) -> Iterator[None]:
        """No gradients and eval mode for a structure-probing forward pass (keeps BatchNorm stats intact)."""
        modes = [(module, module.training) for module in self.module.modules()]
        self.module.eval()
        try:
            with torch.no_grad():
                yield
        finally:
            for module, training in modes:
                module.training = training

    def _infer_num_classes(self) -> int:
        num_classes = getattr(self.module, "num_classes", None)
        if isinstance(num_classes, int) and num_classes > 0:
            return num_classes
        with self._probing():
            return int(self(self._dummy_pixels()).shape[-1])

    def accepts_input_size(self, input_size: tuple[int, int]) -> bool:
        """Whether the wrapped model runs at `input_size` (one forward pass of a blank image, remembered): any size
        for most CNNs, only its own for a ViT with fixed position embeddings."""
        size = _pair(input_size, "input_size")
        if size == self.input_size:
            return True
        known = self._accepted_sizes
        if size not in known:
            try:
                with self._probing():
                    logits = self._logits(
                        self._call(
                            self._normalize_unchecked(torch.zeros(1, 3, *size, device=self.mean.device))
                        )
                    )
                known[size] = logits.shape[-1] == self.num_classes
            except (ValueError, RuntimeError, AssertionError, TypeError, IndexError):
                known[size] = False
        return known[size]

    def with_preprocessing(self, preprocessing: Preprocessing, *, renormalise: bool = False) -> "Classifier":
        """A classifier on the same module (the same weights, not a copy) that reads images with `preprocessing`,
        at its input size: how an evaluation protocol feeds, e.g., the 224-pixel ImageNet-C images to a model
        whose own transform is 448 pixels (Paul & Chen's BiT-M runs). Raises ValueError when the model does not
        run at that size or when `preprocessing` normalises differently (the normalisation belongs to the model),
        unless `renormalise`: a protocol that replaces the model's mean/std on purpose (Park & Kim's feature-map
        notebook feeds ImageNet's to every model).
        """
        if not isinstance(preprocessing, Preprocessing):
            raise TypeError(f"preprocessing must be a Preprocessing, got {type(preprocessing).__name__}.")
        if preprocessing == self.preprocessing:
            return self
        same_normalisation = (preprocessing.mean, preprocessing.std) == (
            self.preprocessing.mean,
            self.preprocessing.std,
        )
        if not renormalise and not same_normalisation:
            raise ValueError(
                f"{self.name}: a protocol may change the geometry of the input, not its normalisation "
                f"(model mean/std {self.preprocessing.mean}/{self.preprocessing.std})."
            )
        if not self.accepts_input_size(preprocessing.input_size):
            raise ValueError(
                f"{self.name} does not run at {preprocessing.input_size[0]}x{preprocessing.input_size[1]} pixels "
                f"(its input size is {self.input_size[0]}x{self.input_size[1]})."
            )
        view = Classifier(
            self.module,
            preprocessing,
            id2label=self.id2label,
            name=self.name,
            spec=self.spec,
            stored_dtype=self.stored_dtype,
        )
        view.training = (
            self.training
        )  # a new nn.Module starts in training mode; the view keeps this one's mode
        return view

    def _normalize_unchecked(self, pixels: torch.Tensor) -> torch.Tensor:
        return ((pixels - self.mean) / self.std).to(self.dtype)

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        """Float pixels in [0, 1], (N, 3, H, W) at `input_size` -> logits (N, num_classes)."""
        return self._logits(self._call(self._normalize(pixels)))

    def preprocess(self, images: Image.Image | Sequence[Image.Image]) -> torch.Tensor:
        """PIL image(s) -> pixels (N, 3, H, W) in [0, 1] on this classifier's device, ready for `forward`."""
        return self.preprocessing.to_tensor(images).to(self.mean.device)

    @torch.no_grad()
    def predict_topk(self, pixels: torch.Tensor, k: int = 5) -> TopK:
        """Softmax probabilities, indices and names of the k most likely classes per image."""
        if not 1 <= k <= self.num_classes:
            raise ValueError(f"k must be in [1, {self.num_classes}], got {k}.")
        probabilities = self(pixels).float().softmax(dim=-1)
        top = probabilities.topk(k, dim=-1)
        labels = [[self.id2label[i] for i in row] for row in top.indices.tolist()]
        return TopK(top.values, top.indices, labels)

    # ------------------------------------------------------------------ feature maps
    def _uses_intermediates(self) -> bool:
        return self.kind == "timm" and callable(getattr(self.module, "forward_intermediates", None))

    def _hook_layer_names(self) -> list[str]:
        feature_info = getattr(self.module, "feature_info", None)
        names = [info["module"] for info in feature_info] if isinstance(feature_info, list) else []
        modules = dict(self.module.named_modules())
        if names and all(isinstance(n, str) and n in modules for n in names):
            return names
        return [name for name, _ in self.module.named_children()]

    def layer_names(self) -> list[str]:
        """Names `feature_maps` returns by default, shallow to deep.

        transformers: "hidden_states.i" (i = 0 is the embedding output, i the output of stage/layer i);
        timm: the `feature_info` module names of `forward_intermediates` ("layer1", "blocks.3", ...);
        other modules: their top-level children. Any name from `module.named_modules()` may also be
        requested; it is then captured with a forward hook.
        """
        if self._layer_names is None:
            if self.kind == "transformers":
                with self._probing():
                    out = self._call(self._normalize(self._dummy_pixels()), output_hidden_states=True)
                hidden = getattr(out, "hidden_states", None) or ()
                self._layer_names = [f"hidden_states.{i}" for i in range(len(hidden))]
            elif self._uses_intermediates():
                with self._probing():
                    inter = self.module.forward_intermediates(
                        self._normalize(self._dummy_pixels()), intermediates_only=True
                    )
                names = self._hook_layer_names() if hasattr(self.module, "feature_info") else []
                if len(names) != len(inter):
                    names = [f"intermediates.{i}" for i in range(len(inter))]
                self._layer_names = names
            else:
                self._layer_names = self._hook_layer_names()
        return list(self._layer_names)

    def feature_maps(
        self, pixels: torch.Tensor, layers: Sequence[str] | None = None
    ) -> dict[str, torch.Tensor]:
        """Intermediate activations by layer name, in network order.

        transformers models: `output_hidden_states` (CNN stages NCHW, ViT tokens (N, tokens, dim));
        timm models: `forward_intermediates` (NCHW, ViT prefix tokens removed); anything else, or any
        `named_modules()` name: forward hooks (the first tensor of the module's output). Gradients flow
        unless the caller disables them.
        """
        if isinstance(layers, str):
            raise TypeError("layers must be a sequence of names, not a single string.")
        default = self.layer_names()
        requested = list(default) if layers is None else list(layers)
        if not requested:
            raise ValueError("layers is empty.")
        if all(name in default for name in requested):
            inputs = self._normalize(pixels)
            if self.kind == "transformers":
                hidden = self._call(inputs, output_hidden_states=True).hidden_states
                return {name: hidden[default.index(name)] for name in default if name in requested}
            if self._uses_intermediates():
                indices = sorted(default.index(name) for name in set(requested))
                outputs = self.module.forward_intermediates(inputs, indices=indices, intermediates_only=True)
                return {default[i]: out for i, out in zip(indices, outputs, strict=True)}
        return self._hooked_feature_maps(pixels, requested)

    def _hooked_feature_maps(self, pixels: torch.Tensor, requested: list[str]) -> dict[str, torch.Tensor]:
        modules = dict(self.module.named_modules())
        unknown = [name for name in requested if name not in modules or name == ""]
        if unknown:
            raise ValueError(
                f"{self.name}: unknown layers {unknown}; available: {self.layer_names()} "
                "(or any name from classifier.module.named_modules())."
            )
        captured: dict[str, torch.Tensor] = {}

        def make_hook(layer: str) -> Callable[..., None]:
            def hook(_module: nn.Module, _args: Any, output: Any) -> None:
                tensor = _first_tensor(output)
                if tensor is not None and layer not in captured:
                    captured[layer] = tensor

            return hook

        handles = [modules[name].register_forward_hook(make_hook(name)) for name in dict.fromkeys(requested)]
        try:
            self(pixels)
        finally:
            for handle in handles:
                handle.remove()
        missing = [name for name in requested if name not in captured]
        if missing:
            raise ValueError(f"{self.name}: layers {missing} produced no tensor output in the forward pass.")
        order = list(modules)
        return {name: captured[name] for name in sorted(captured, key=order.index)}

    # ------------------------------------------------------------------ attention maps
    def _timm_attention_modules(self) -> list[tuple[str, nn.Module]]:
        return [
            (name, module)
            for name, module in self.module.named_modules()
            if isinstance(getattr(module, "fused_attn", None), bool)
            and isinstance(getattr(module, "attn_drop", None), nn.Module)
        ]

    @contextlib.contextmanager
    def _eager_attention(self) -> Iterator[None]:
        """transformers' fused kernels (sdpa, flash) return no attention weights: switch to eager meanwhile."""
        config = getattr(self.module, "config", None)
        current = getattr(config, "_attn_implementation", None)
        switch = current not in (None, "eager") and hasattr(self.module, "set_attn_implementation")
        if switch:
            self.module.set_attn_implementation("eager")
        try:
            yield
        finally:
            if switch:
                self.module.set_attn_implementation(current)

    def _transformers_attentions(self, inputs: torch.Tensor) -> tuple[torch.Tensor, ...]:
        with self._eager_attention():
            try:
                out = self._call(inputs, output_attentions=True)
            except TypeError:
                return ()
        attentions = getattr(out, "attentions", None) or ()
        return tuple(a for a in attentions if isinstance(a, torch.Tensor))

    @property
    def has_attention(self) -> bool:
        """Whether `attention_maps` works for this architecture."""
        if self._has_attention is None:
            if self.kind == "transformers":
                with self._probing():
                    self._has_attention = bool(
                        self._transformers_attentions(self._normalize(self._dummy_pixels()))
                    )
            elif self.kind == "timm":
                self._has_attention = bool(self._timm_attention_modules())
            else:
                self._has_attention = False
        return self._has_attention

    def attention_maps(self, pixels: torch.Tensor) -> dict[str, torch.Tensor]:
        """Softmax attention weights of every attention layer, in network order.

        transformers: `output_attentions` ("attentions.i"; ViT/DeiT (N, heads, tokens, tokens), Swin per
        window, AlterNet (N, windows, heads, area, area)); timm: the softmax input of each attention
        module's `attn_drop` with fused attention switched off for the call ("blocks.i.attn",
        (N, heads, tokens, tokens)). Raises ValueError for models without attention (CNNs).
        """
        if not self.has_attention:
            raise ValueError(
                f"Model {self.name!r} ({type(self.module).__name__}) has no attention maps: it has no "
                "self-attention layers that report their weights."
            )
        inputs = self._normalize(pixels)
        if self.kind == "transformers":
            attentions = self._transformers_attentions(inputs)
            return {f"attentions.{i}": attention for i, attention in enumerate(attentions)}
        attention_modules = self._timm_attention_modules()
        captured: dict[str, torch.Tensor] = {}

        def make_hook(layer: str) -> Callable[..., None]:
            def hook(_module: nn.Module, args: tuple[Any, ...], _output: Any) -> None:
                captured[layer] = args[0]  # the softmax, before dropout

            return hook

        handles = [
            module.attn_drop.register_forward_hook(make_hook(name)) for name, module in attention_modules
        ]
        fused = [module.fused_attn for _, module in attention_modules]
        try:
            for _, module in attention_modules:
                module.fused_attn = False
            self._call(inputs)
        finally:
            for (_, module), was_fused in zip(attention_modules, fused, strict=True):
                module.fused_attn = was_fused
            for handle in handles:
                handle.remove()
        return {name: captured[name] for name, _ in attention_modules if name in captured}

    # ------------------------------------------------------------------ analysis hooks for probes
    def differentiable_attention(self) -> contextlib.AbstractContextManager[None]:
        """A context in which every attention layer computes an explicit softmax(QK^T)V path that supports double
        backward (Hessian-vector products), instead of a fused kernel that may not. See `attention_paths`."""
        return differentiable_attention(self.module)

    def residual_units(self) -> list[ResidualUnit]:
        """The residual units a lesion study can switch off, in network order. See `residual_units`."""
        return find_residual_units(self.module)

    def residual_sums(self) -> list[ResidualSum]:
        """The embedding and every residual sum (after each attention / MLP / conv residual), in network order.
        See `residual_units.find_residual_sums`."""
        return find_residual_sums(self.module)

    def residual_sum_maps(self, pixels: torch.Tensor) -> dict[str, torch.Tensor]:
        """The activations at every `residual_sums()` point for `pixels` in [0, 1], by sum name in network order
        (ViT tokens (N, tokens, dim) with their prefix tokens, CNN maps (N, C, H, W)). Gradients flow unless the
        caller disables them."""
        sums = self.residual_sums()
        with recording_residual_sums(self.module, sums) as captured:
            self(pixels)
        missing = [s.name for s in sums if s.name not in captured]
        if missing:
            raise ValueError(f"{self.name}: residual sums {missing} were not reached in the forward pass.")
        return {s.name: captured[s.name] for s in sums}

    def lesion(self, units: Sequence[str]) -> contextlib.AbstractContextManager[None]:
        """A context in which the named residual units contribute nothing (their branch outputs zero)."""
        return lesioned(self.module, units)


__all__ = [
    "IMAGENET_DEFAULT_MEAN",
    "IMAGENET_DEFAULT_STD",
    "Classifier",
    "Preprocessing",
    "TopK",
]
