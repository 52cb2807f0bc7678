# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""PyTorch AlterNet.

AlterNet (Park & Kim, "How Do Vision Transformers Work?", ICLR 2022, Sec. 4, Alg. 1) is a pre-activation ResNet
whose stage-ending conv blocks are replaced by windowed multi-head self-attention blocks. Module layout, block
order, initialisation and numerics follow the official implementation (github xxxnell/how-do-vits-work,
models/alternet.py, attentions.py, preresnet_dnn_block.py), so official checkpoints convert one-to-one
(see `convert.py`).

This file imports only torch, transformers and its sibling files, so that it can be copied to the Hub as remote code.
"""

import contextlib
import math
import threading
import warnings
from collections.abc import Callable
from typing import Any, ClassVar

import torch
import torch.nn.functional as F
from torch import nn
from transformers import PreTrainedModel
from transformers import initialization as init
from transformers.modeling_layers import GradientCheckpointingLayer
from transformers.modeling_outputs import BaseModelOutputWithPooling, ImageClassifierOutput
from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

from .configuration_alternet import AlterNetConfig


def drop_path(hidden_states: torch.Tensor, drop_prob: float = 0.0, training: bool = False) -> torch.Tensor:
    """Drop whole residual branches per sample (stochastic depth), rescaling the kept ones by 1 / keep_prob."""
    if drop_prob == 0.0 or not training:
        return hidden_states
    keep_prob = 1.0 - drop_prob
    shape = (hidden_states.shape[0],) + (1,) * (hidden_states.ndim - 1)
    random_tensor = keep_prob + torch.rand(shape, dtype=hidden_states.dtype, device=hidden_states.device)
    return hidden_states.div(keep_prob) * random_tensor.floor_()


_checkpoint_state = threading.local()


@contextlib.contextmanager
def _recomputing_for_backward():
    """Marks the forward pass that activation checkpointing replays during backward."""
    previous = getattr(_checkpoint_state, "recomputing", False)
    _checkpoint_state.recomputing = True
    try:
        yield
    finally:
        _checkpoint_state.recomputing = previous


def _checkpoint_contexts() -> tuple[contextlib.AbstractContextManager, contextlib.AbstractContextManager]:
    """`context_fn` for `torch.utils.checkpoint`: nothing around the first pass, a marker around the replay."""
    return contextlib.nullcontext(), _recomputing_for_backward()


class AlterNetBatchNorm2d(nn.BatchNorm2d):
    """BatchNorm2d whose running statistics are updated once per step, also under activation checkpointing.

    The replayed forward pass of a checkpointed layer normalises with the same batch statistics as the first pass
    but leaves the running mean, variance and batch count alone; plain BatchNorm would update them twice.
    """

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        if self.training and getattr(_checkpoint_state, "recomputing", False):
            # Throwaway copies of the statistics keep the saved-tensor layout identical to the first pass.
            running_mean, running_var = self.running_mean.clone(), self.running_var.clone()
            return F.batch_norm(
                hidden_states, running_mean, running_var, self.weight, self.bias, True, 0.0, self.eps
            )
        return super().forward(hidden_states)


class AlterNetDropPath(nn.Module):
    def __init__(self, drop_prob: float = 0.0):
        super().__init__()
        self.drop_prob = drop_prob

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return drop_path(hidden_states, self.drop_prob, self.training)

    def extra_repr(self) -> str:
        return f"p={self.drop_prob}"


class AlterNetEmbeddings(nn.Module):
    """Stem: a 7x7/2 conv and a 3x3/2 max-pool (ImageNet) or a 3x3/1 conv (CIFAR). Pre-activation: no norm here."""

    def __init__(self, config: AlterNetConfig):
        super().__init__()
        if config.stem_pool:
            self.convolution = nn.Conv2d(
                config.num_channels, config.embedding_size, kernel_size=7, stride=2, padding=3, bias=False
            )
            self.pooler = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        else:
            self.convolution = nn.Conv2d(
                config.num_channels, config.embedding_size, kernel_size=3, stride=1, padding=1, bias=False
            )
            self.pooler = nn.Identity()
        self.num_channels = config.num_channels

    def forward(self, pixel_values: torch.Tensor) -> torch.Tensor:
        if pixel_values.shape[1] != self.num_channels:
            raise ValueError(
                f"pixel_values has {pixel_values.shape[1]} channels but the config expects {self.num_channels}."
            )
        return self.pooler(self.convolution(pixel_values))


class AlterNetPreActivationLayer(GradientCheckpointingLayer):
    """Shared skeleton of the pre-activation blocks: norm -> act, then a residual branch and a (projected) skip.

    As in the official pre-activation ResNet, a projecting shortcut reads the pre-activated input, while an
    identity shortcut reads the raw input.
    """

    def __init__(
        self, in_channels: int, out_channels: int, stride: int, drop_path_rate: float, activation: nn.Module
    ):
        super().__init__()
        self.norm1 = AlterNetBatchNorm2d(in_channels)
        self.activation = activation
        needs_projection = stride != 1 or in_channels != out_channels
        self.shortcut = (
            nn.Conv2d(in_channels, out_channels, kernel_size=1, stride=stride, bias=False)
            if needs_projection
            else None
        )
        self.drop_path = AlterNetDropPath(drop_path_rate) if drop_path_rate > 0.0 else nn.Identity()

    def branch(
        self, hidden_states: torch.Tensor, output_attentions: bool
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The residual branch on the pre-activated input; returns it and the attention weights, if any."""
        raise NotImplementedError

    def forward(
        self, hidden_states: torch.Tensor, output_attentions: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        if self.shortcut is not None:
            hidden_states = self.activation(self.norm1(hidden_states))
            residual = self.shortcut(hidden_states)
        else:
            residual = hidden_states
            hidden_states = self.activation(self.norm1(hidden_states))
        hidden_states, attention_weights = self.branch(hidden_states, output_attentions)
        return self.drop_path(hidden_states) + residual, attention_weights


class AlterNetBasicLayer(AlterNetPreActivationLayer):
    """Pre-activation basic block (AlterNet-18/34): 3x3 conv -> BN -> ReLU -> 3x3 conv."""

    expansion = 1

    def __init__(self, in_channels: int, channels: int, stride: int = 1, drop_path_rate: float = 0.0):
        out_channels = channels * self.expansion
        super().__init__(in_channels, out_channels, stride, drop_path_rate, nn.ReLU())
        self.conv1 = nn.Conv2d(in_channels, channels, kernel_size=3, stride=stride, padding=1, bias=False)
        self.norm2 = AlterNetBatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, out_channels, kernel_size=3, padding=1, bias=False)

    def branch(self, hidden_states: torch.Tensor, output_attentions: bool) -> tuple[torch.Tensor, None]:
        hidden_states = self.conv1(hidden_states)
        hidden_states = self.conv2(self.activation(self.norm2(hidden_states)))
        return hidden_states, None


class AlterNetBottleNeckLayer(AlterNetPreActivationLayer):
    """Pre-activation bottleneck (AlterNet-50/101/152): 1x1 conv -> BN-ReLU-3x3 conv (strided) -> BN-ReLU-1x1 conv."""

    expansion = 4

    def __init__(self, in_channels: int, channels: int, stride: int = 1, drop_path_rate: float = 0.0):
        out_channels = channels * self.expansion
        super().__init__(in_channels, out_channels, stride, drop_path_rate, nn.ReLU())
        self.conv1 = nn.Conv2d(in_channels, channels, kernel_size=1, bias=False)
        self.norm2 = AlterNetBatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, kernel_size=3, stride=stride, padding=1, bias=False)
        self.norm3 = AlterNetBatchNorm2d(channels)
        self.conv3 = nn.Conv2d(channels, out_channels, kernel_size=1, bias=False)

    def branch(self, hidden_states: torch.Tensor, output_attentions: bool) -> tuple[torch.Tensor, None]:
        hidden_states = self.conv1(hidden_states)
        hidden_states = self.conv2(self.activation(self.norm2(hidden_states)))
        hidden_states = self.conv3(self.activation(self.norm3(hidden_states)))
        return hidden_states, None


def eager_attention_forward(
    module: nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    scaling: float,
    **kwargs: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(q k^T * scaling + mask) v, written out (AlterNet has no dropout on the attention weights); returns the
    context (B, tokens, heads, d) and the weights (B, heads, tokens, tokens)."""
    attn_weights = torch.matmul(query, key.transpose(-1, -2)) * scaling
    if attention_mask is not None:
        attn_weights = attn_weights + attention_mask
    attn_weights = attn_weights.softmax(dim=-1)
    attn_output = torch.matmul(attn_weights, value)
    return attn_output.transpose(1, 2).contiguous(), attn_weights


class AlterNetWindowAttention(nn.Module):
    """Multi-head self-attention inside non-overlapping `window_size` x `window_size` windows.

    Queries, keys and values are 1x1 convolutions (`heads * head_size` wide, no bias), the output projection is a
    1x1 convolution with bias. One relative position bias table of shape (2w-1, 2w-1) is shared by all heads and
    windows and added to the logits: softmax(q k^T / sqrt(d) + B) v.

    The 1x1 convolutions are pointwise, so they run as matrix products on the windowed tokens: the feature map is
    copied into (windows, tokens, channels) once on the way in and once on the way out, and everything between
    is views. The weights keep the official Conv2d shapes, so official checkpoints load unchanged.

    `config._attn_implementation` picks the kernel, as in transformers' models: "sdpa" (the default,
    `F.scaled_dot_product_attention`) or "eager" (the explicit softmax(q k^T / sqrt(d) + B) v of
    `eager_attention_forward`), which fused kernels' lack of double backward makes necessary for Hessian-vector
    products (see `hf_vitrobust.models.attention_paths`). Both compute the same function; the eager path is also
    taken whenever the attention weights are requested (`output_attentions`).
    """

    def __init__(self, config: AlterNetConfig, in_channels: int, out_channels: int, stage_index: int):
        super().__init__()
        self.config = config
        self.num_heads = config.num_heads[stage_index]
        self.head_size = config.attention_head_size
        self.window_size = window_size = config.window_sizes[stage_index]
        self.stage_index = stage_index
        self.scaling = self.head_size**-0.5
        self.is_causal = False
        inner_size = self.num_heads * self.head_size
        self.query = nn.Conv2d(in_channels, inner_size, kernel_size=1, bias=False)
        self.key_value = nn.Conv2d(in_channels, 2 * inner_size, kernel_size=1, bias=False)
        self.output = nn.Conv2d(inner_size, out_channels, kernel_size=1)
        dropout_prob = config.hidden_dropout_prob
        self.dropout = nn.Dropout(dropout_prob) if dropout_prob > 0.0 else nn.Identity()
        self.relative_position_bias_table = nn.Parameter(
            torch.zeros(2 * window_size - 1, 2 * window_size - 1)
        )
        self.relative_position_index = nn.Buffer(
            self.create_relative_position_index(window_size), persistent=False
        )

    @staticmethod
    def create_relative_position_index(window_size: int) -> torch.Tensor:
        """Flat index into the bias table for every (query, key) pair: (key - query) offset per axis, shifted by w-1.

        Tokens are numbered row-major inside a window (token = row * w + col), as in the official code.
        """
        rows, cols = torch.meshgrid(torch.arange(window_size), torch.arange(window_size), indexing="ij")
        coords = torch.stack([rows.flatten(), cols.flatten()])  # (2, w*w)
        offsets = coords[:, None, :] - coords[:, :, None] + (window_size - 1)  # (2, query, key)
        return offsets[0] * (2 * window_size - 1) + offsets[1]

    def relative_position_bias(self) -> torch.Tensor:
        return self.relative_position_bias_table.view(-1)[self.relative_position_index]

    def forward(
        self, hidden_states: torch.Tensor, output_attentions: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        batch, channels, height, width = hidden_states.shape
        w = self.window_size
        if height % w or width % w:
            raise ValueError(
                f"AlterNet stage {self.stage_index + 1}: the {height}x{width} feature map is not tiled by "
                f"{w}x{w} attention windows. Use an input size whose stage-{self.stage_index + 1} feature map is "
                f"a multiple of {w} on both sides, or change `window_sizes`."
            )
        rows, cols = height // w, width // w
        # (B, C, H, W) -> (B * windows, w*w, C); windows and the tokens inside them in row-major order.
        tokens = hidden_states.view(batch, channels, rows, w, cols, w).permute(0, 2, 4, 3, 5, 1)
        tokens = tokens.reshape(batch * rows * cols, w * w, channels)
        query = F.linear(tokens, self.query.weight.flatten(1))
        key, value = F.linear(tokens, self.key_value.weight.flatten(1)).chunk(2, dim=-1)
        # (B * windows, tokens, heads * d) -> (B * windows, heads, tokens, d), channel index = head * d + i.
        query, key, value = (
            t.unflatten(-1, (self.num_heads, self.head_size)).transpose(1, 2) for t in (query, key, value)
        )
        bias = self.relative_position_bias().to(query.dtype)

        attention_interface: Callable = eager_attention_forward
        if self.config._attn_implementation != "eager" and not output_attentions:
            attention_interface = ALL_ATTENTION_FUNCTIONS.get_interface(
                self.config._attn_implementation, eager_attention_forward
            )
        context, attention_weights = attention_interface(self, query, key, value, bias, scaling=self.scaling)
        attention_weights = (
            attention_weights.view(batch, rows * cols, self.num_heads, w * w, w * w)
            if output_attentions
            else None
        )

        context = context.flatten(2)  # (B * windows, tokens, heads * d)
        output = F.linear(context, self.output.weight.flatten(1), self.output.bias)
        output = output.view(batch, rows, cols, w, w, -1).permute(0, 5, 1, 3, 2, 4)
        return self.dropout(output.reshape(batch, -1, height, width)), attention_weights


class AlterNetAttentionLayer(AlterNetPreActivationLayer):
    """Pre-activation MSA block: BN -> GELU -> 1x1 conv -> BN -> window attention, DropPath and skip; no MLP."""

    def __init__(
        self,
        config: AlterNetConfig,
        in_channels: int,
        channels: int,
        stage_index: int,
        drop_path_rate: float = 0.0,
    ):
        expansion = config.expansion
        out_channels = channels * expansion
        super().__init__(in_channels, out_channels, 1, drop_path_rate, nn.GELU())
        width = in_channels // expansion
        self.conv = nn.Conv2d(in_channels, width, kernel_size=1, bias=False)
        self.norm2 = AlterNetBatchNorm2d(width)
        self.attention = AlterNetWindowAttention(config, width, out_channels, stage_index)

    def branch(
        self, hidden_states: torch.Tensor, output_attentions: bool
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        hidden_states = self.norm2(self.conv(hidden_states))
        return self.attention(hidden_states, output_attentions=output_attentions)


class AlterNetStage(nn.Module):
    """One stage: `depths - 2 * attention_depths` conv blocks, then `attention_depths` (conv, MSA) pairs."""

    def __init__(
        self, config: AlterNetConfig, stage_index: int, in_channels: int, drop_path_rates: list[float]
    ):
        super().__init__()
        conv_block = AlterNetBottleNeckLayer if config.layer_type == "bottleneck" else AlterNetBasicLayer
        channels = config.hidden_sizes[stage_index]
        num_blocks, num_attention = config.depths[stage_index], config.attention_depths[stage_index]
        is_attention = [False] * (num_blocks - 2 * num_attention) + [False, True] * num_attention
        layers = []
        for block_index, (attention, rate) in enumerate(zip(is_attention, drop_path_rates, strict=True)):
            if attention:
                layers.append(AlterNetAttentionLayer(config, in_channels, channels, stage_index, rate))
            else:
                stride = config.strides[stage_index] if block_index == 0 else 1
                layers.append(conv_block(in_channels, channels, stride=stride, drop_path_rate=rate))
            in_channels = channels * config.expansion
        self.layers = nn.ModuleList(layers)

    def forward(
        self, hidden_states: torch.Tensor, output_attentions: bool = False
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, ...]]:
        attentions = ()
        for layer in self.layers:
            hidden_states, weights = layer(hidden_states, output_attentions)
            if weights is not None:
                attentions += (weights,)
        return hidden_states, attentions


class AlterNetEncoder(nn.Module):
    def __init__(self, config: AlterNetConfig):
        super().__init__()
        total_blocks = sum(config.depths)
        # Stochastic depth rises linearly with the global block index, from 0 to drop_path_rate.
        rates = [config.drop_path_rate * i / max(total_blocks - 1, 1) for i in range(total_blocks)]
        stages, in_channels, start = [], config.embedding_size, 0
        for stage_index, depth in enumerate(config.depths):
            stages.append(AlterNetStage(config, stage_index, in_channels, rates[start : start + depth]))
            in_channels, start = config.stage_out_channels(stage_index), start + depth
        self.stages = nn.ModuleList(stages)

    def forward(
        self, hidden_states: torch.Tensor, output_hidden_states: bool = False, output_attentions: bool = False
    ) -> BaseModelOutputWithPooling:
        all_hidden_states = (hidden_states,) if output_hidden_states else None
        all_attentions = () if output_attentions else None
        for stage in self.stages:
            hidden_states, attentions = stage(hidden_states, output_attentions)
            if output_hidden_states:
                all_hidden_states += (hidden_states,)
            if output_attentions:
                all_attentions += attentions
        return BaseModelOutputWithPooling(
            last_hidden_state=hidden_states, hidden_states=all_hidden_states, attentions=all_attentions
        )


class AlterNetPreTrainedModel(PreTrainedModel):
    config: AlterNetConfig
    config_class = AlterNetConfig
    base_model_prefix = "alternet"
    main_input_name = "pixel_values"
    input_modalities = ("image",)
    supports_gradient_checkpointing = True
    _supports_sdpa = True
    _no_split_modules: ClassVar[list[str]] = [
        "AlterNetBasicLayer",
        "AlterNetBottleNeckLayer",
        "AlterNetAttentionLayer",
    ]

    def gradient_checkpointing_enable(
        self, gradient_checkpointing_kwargs: dict | None = None, **kwargs: Any
    ) -> None:
        """Activation checkpointing that keeps BatchNorm's running statistics exact.

        Uses non-reentrant `torch.utils.checkpoint` with a `context_fn` that marks the replayed pass, in which
        `AlterNetBatchNorm2d` does not update its running statistics (see there). With `use_reentrant=True` that
        marker is unavailable and the statistics are updated twice per step, as in any checkpointed BN network.
        """
        checkpoint_kwargs = {"use_reentrant": False, **(gradient_checkpointing_kwargs or {})}
        if not checkpoint_kwargs["use_reentrant"]:
            checkpoint_kwargs.setdefault("context_fn", _checkpoint_contexts)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "`gradient_checkpointing_enable` is deprecated", FutureWarning)
            super().gradient_checkpointing_enable(gradient_checkpointing_kwargs=checkpoint_kwargs, **kwargs)

    def _init_weights(self, module: nn.Module) -> None:
        """PyTorch's default initialisation for convolutions and linear layers, as in the official code (instead of
        the base class's N(0, initializer_range^2), whose draws would change the random stream), N(0, 0.02^2) for the
        bias tables, and the base class's for the rest (BatchNorm: weight 1, bias 0, fresh running statistics)."""
        if isinstance(module, (nn.Conv2d, nn.Linear)):
            init.kaiming_uniform_(module.weight, a=math.sqrt(5))
            if module.bias is not None:
                fan_in, _ = torch.nn.init._calculate_fan_in_and_fan_out(module.weight)
                bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
                init.uniform_(module.bias, -bound, bound)
        elif isinstance(module, AlterNetWindowAttention):
            init.normal_(module.relative_position_bias_table, mean=0.0, std=self.config.initializer_range)
            init.copy_(
                module.relative_position_index, module.create_relative_position_index(module.window_size)
            )
        else:
            super()._init_weights(module)


class AlterNetModel(AlterNetPreTrainedModel):
    """AlterNet backbone: stem, stages, and the final pre-activation BN -> ReLU, then global average pooling."""

    def __init__(self, config: AlterNetConfig):
        super().__init__(config)
        self.embeddings = AlterNetEmbeddings(config)
        self.encoder = AlterNetEncoder(config)
        self.norm = AlterNetBatchNorm2d(config.stage_out_channels(config.num_stages - 1))
        self.activation = nn.ReLU()
        self.pooler = nn.AdaptiveAvgPool2d((1, 1))
        self.post_init()

    def forward(
        self,
        pixel_values: torch.Tensor,
        output_hidden_states: bool | None = None,
        output_attentions: bool | None = None,
        return_dict: bool | None = None,
        **kwargs,
    ) -> BaseModelOutputWithPooling | tuple:
        r"""
        Returns `last_hidden_state` (the final feature map after BN -> ReLU, (B, C, h, w)), `pooler_output`
        ((B, C)), `hidden_states` (the stem output and every stage's output, (B, C_i, H_i, W_i)) and `attentions`
        (one per MSA block, (B, num_windows, heads, w*w, w*w), windows in row-major order).
        """
        output_hidden_states = (
            output_hidden_states if output_hidden_states is not None else self.config.output_hidden_states
        )
        output_attentions = (
            output_attentions if output_attentions is not None else self.config.output_attentions
        )
        return_dict = return_dict if return_dict is not None else self.config.return_dict

        encoder_outputs = self.encoder(
            self.embeddings(pixel_values),
            output_hidden_states=output_hidden_states,
            output_attentions=output_attentions,
        )
        last_hidden_state = self.activation(self.norm(encoder_outputs.last_hidden_state))
        pooled_output = self.pooler(last_hidden_state).flatten(1)

        if not return_dict:
            extras = (encoder_outputs.hidden_states, encoder_outputs.attentions)
            return (last_hidden_state, pooled_output, *(v for v in extras if v is not None))
        return BaseModelOutputWithPooling(
            last_hidden_state=last_hidden_state,
            pooler_output=pooled_output,
            hidden_states=encoder_outputs.hidden_states,
            attentions=encoder_outputs.attentions,
        )


class AlterNetForImageClassification(AlterNetPreTrainedModel):
    """AlterNet with a linear classifier on the pooled features, e.g. for ImageNet or CIFAR-100."""

    def __init__(self, config: AlterNetConfig):
        super().__init__(config)
        self.num_labels = config.num_labels
        self.alternet = AlterNetModel(config)
        in_features = config.stage_out_channels(config.num_stages - 1)
        self.classifier = (
            nn.Linear(in_features, config.num_labels) if config.num_labels > 0 else nn.Identity()
        )
        self.post_init()

    def forward(
        self,
        pixel_values: torch.Tensor | None = None,
        labels: torch.LongTensor | None = None,
        output_hidden_states: bool | None = None,
        output_attentions: bool | None = None,
        return_dict: bool | None = None,
        **kwargs,
    ) -> ImageClassifierOutput | tuple:
        r"""
        labels (`torch.LongTensor` of shape `(batch_size,)`, *optional*):
            Labels for the classification loss (cross-entropy when `config.num_labels > 1`).
        """
        return_dict = return_dict if return_dict is not None else self.config.return_dict
        outputs = self.alternet(
            pixel_values,
            output_hidden_states=output_hidden_states,
            output_attentions=output_attentions,
            return_dict=True,
        )
        logits = self.classifier(outputs.pooler_output)
        loss = self.loss_function(labels, logits, self.config) if labels is not None else None

        if not return_dict:
            extras = tuple(v for v in (outputs.hidden_states, outputs.attentions) if v is not None)
            return ((loss,) if loss is not None else ()) + (logits,) + extras
        return ImageClassifierOutput(
            loss=loss, logits=logits, hidden_states=outputs.hidden_states, attentions=outputs.attentions
        )


# `save_pretrained` copies this file (and configuration_alternet.py) beside the weights and writes `auto_map`, so that
# the folder loads with `trust_remote_code=True` where hf_vitrobust is not installed.
AlterNetModel.register_for_auto_class("AutoModel")
AlterNetForImageClassification.register_for_auto_class("AutoModelForImageClassification")

__all__ = ["AlterNetForImageClassification", "AlterNetModel", "AlterNetPreTrainedModel"]
