# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Park & Kim's own ResNet (`resnet_dnn_*` of github xxxnell/how-do-vits-work, models/resnet.py and
models/resnet_dnn_block.py) as a native transformers model, so that their CIFAR-100 ResNet-50 checkpoint runs here.

Each block computes `relu(drop_path(branch(x)) + shortcut(x))`; the branch is conv -> BN -> ReLU ... -> conv -> BN,
the shortcut a 1x1 conv and BN where the stride or width changes, else the identity. Convolutions have no bias. The
weights of their checkpoint map one-to-one onto this model (`convert_park_kim_resnet_to_hf.py`).

This file imports only torch, transformers and its sibling configuration file, so that it can be copied to the Hub as
remote code.
"""

import math
from typing import ClassVar

import torch
from torch import nn
from transformers import PreTrainedModel
from transformers import initialization as init
from transformers.modeling_outputs import (
    BaseModelOutputWithPoolingAndNoAttention,
    ImageClassifierOutputWithNoAttention,
)

from .configuration_park_kim_resnet import ParkKimResNetConfig


class ParkKimResNetDropPath(nn.Module):
    """Stochastic depth of a residual branch (their `layers.DropPath`): in training, a sample's branch is zeroed with
    probability `drop_prob` and the others are scaled by 1 / (1 - drop_prob); the identity in evaluation."""

    def __init__(self, drop_prob: float = 0.0):
        super().__init__()
        self.drop_prob = drop_prob

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        if self.drop_prob == 0.0 or not self.training:
            return hidden_states
        keep = 1.0 - self.drop_prob
        shape = (hidden_states.shape[0],) + (1,) * (hidden_states.ndim - 1)
        mask = torch.empty(shape, dtype=hidden_states.dtype, device=hidden_states.device).bernoulli_(keep)
        return hidden_states / keep * mask

    def extra_repr(self) -> str:
        return f"p={self.drop_prob}"


class ParkKimResNetConvLayer(nn.Module):
    """Convolution (no bias) -> BatchNorm, then ReLU when `activation`."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        stride: int = 1,
        activation: bool = True,
    ):
        super().__init__()
        self.convolution = nn.Conv2d(
            in_channels, out_channels, kernel_size, stride=stride, padding=kernel_size // 2, bias=False
        )
        self.normalization = nn.BatchNorm2d(out_channels)
        self.activation = nn.ReLU() if activation else nn.Identity()

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.activation(self.normalization(self.convolution(hidden_states)))


class ParkKimResNetEmbeddings(nn.Module):
    """The stem (their `layer0`): 3x3/1 conv -> BN -> ReLU, or with `stem_pool` 7x7/2 conv -> BN -> ReLU -> 3x3/2
    max-pool."""

    def __init__(self, config: ParkKimResNetConfig):
        super().__init__()
        kernel_size, stride = (7, 2) if config.stem_pool else (3, 1)
        self.embedder = ParkKimResNetConvLayer(
            config.num_channels, config.embedding_size, kernel_size, stride=stride
        )
        self.pooler = nn.MaxPool2d(kernel_size=3, stride=2, padding=1) if config.stem_pool else nn.Identity()

    def forward(self, pixel_values: torch.Tensor) -> torch.Tensor:
        return self.pooler(self.embedder(pixel_values))


class ParkKimResNetLayer(nn.Module):
    """One residual block, basic (two 3x3 convs) or bottleneck (1x1, 3x3 with the stride, 1x1 to 4x the width)."""

    def __init__(
        self, in_channels: int, channels: int, layer_type: str, stride: int = 1, drop_path_rate: float = 0.0
    ):
        super().__init__()
        expansion = 4 if layer_type == "bottleneck" else 1
        out_channels = channels * expansion
        projects = stride != 1 or in_channels != out_channels
        self.shortcut = (
            ParkKimResNetConvLayer(in_channels, out_channels, 1, stride=stride, activation=False)
            if projects
            else nn.Identity()
        )
        if layer_type == "bottleneck":
            convs = [
                ParkKimResNetConvLayer(in_channels, channels, 1),
                ParkKimResNetConvLayer(channels, channels, 3, stride=stride),
                ParkKimResNetConvLayer(channels, out_channels, 1, activation=False),
            ]
        else:
            convs = [
                ParkKimResNetConvLayer(in_channels, channels, 3, stride=stride),
                ParkKimResNetConvLayer(channels, out_channels, 3, activation=False),
            ]
        self.layer = nn.Sequential(*convs)
        self.drop_path = ParkKimResNetDropPath(drop_path_rate) if drop_path_rate > 0 else nn.Identity()
        self.activation = nn.ReLU()

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.activation(self.drop_path(self.layer(hidden_states)) + self.shortcut(hidden_states))


class ParkKimResNetStage(nn.Module):
    def __init__(self, layers: list[ParkKimResNetLayer]):
        super().__init__()
        self.layers = nn.Sequential(*layers)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.layers(hidden_states)


class ParkKimResNetEncoder(nn.Module):
    """The stages (their `layer1` ... `layer4`); the first block of every stage but the first has stride 2."""

    def __init__(self, config: ParkKimResNetConfig):
        super().__init__()
        total = sum(config.depths)
        rates = [config.drop_path_rate * index / max(total - 1, 1) for index in range(total)]
        stages, in_channels, index = [], config.embedding_size, 0
        for stage, (channels, depth) in enumerate(zip(config.hidden_sizes, config.depths, strict=True)):
            layers = []
            for block in range(depth):
                stride = 2 if stage > 0 and block == 0 else 1
                layers.append(
                    ParkKimResNetLayer(in_channels, channels, config.layer_type, stride, rates[index])
                )
                in_channels, index = channels * config.expansion, index + 1
            stages.append(ParkKimResNetStage(layers))
        self.stages = nn.ModuleList(stages)

    def forward(
        self, hidden_states: torch.Tensor, output_hidden_states: bool = False
    ) -> BaseModelOutputWithPoolingAndNoAttention:
        all_hidden_states = (hidden_states,) if output_hidden_states else None
        for stage in self.stages:
            hidden_states = stage(hidden_states)
            if output_hidden_states:
                all_hidden_states += (hidden_states,)
        return BaseModelOutputWithPoolingAndNoAttention(
            last_hidden_state=hidden_states, hidden_states=all_hidden_states
        )


class ParkKimResNetPreTrainedModel(PreTrainedModel):
    config: ParkKimResNetConfig
    config_class = ParkKimResNetConfig
    base_model_prefix = "resnet"
    main_input_name = "pixel_values"
    input_modalities = ("image",)
    _no_split_modules: ClassVar[list[str]] = ["ParkKimResNetLayer"]

    def _init_weights(self, module: nn.Module) -> None:
        """PyTorch's default initialisation for convolutions and linear layers, as their code leaves them, and the
        base class's for the rest (BatchNorm: weight 1, bias 0, fresh running statistics)."""
        if isinstance(module, (nn.Conv2d, nn.Linear)):
            init.kaiming_uniform_(module.weight, a=math.sqrt(5))
            if module.bias is not None:
                fan_in, _ = torch.nn.init._calculate_fan_in_and_fan_out(module.weight)
                bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
                init.uniform_(module.bias, -bound, bound)
        else:
            super()._init_weights(module)


class ParkKimResNetModel(ParkKimResNetPreTrainedModel):
    """The backbone: stem, stages, global average pooling."""

    def __init__(self, config: ParkKimResNetConfig):
        super().__init__(config)
        self.embedder = ParkKimResNetEmbeddings(config)
        self.encoder = ParkKimResNetEncoder(config)
        self.pooler = nn.AdaptiveAvgPool2d((1, 1))
        self.post_init()

    def forward(
        self,
        pixel_values: torch.Tensor,
        output_hidden_states: bool | None = None,
        return_dict: bool | None = None,
        **kwargs,
    ) -> BaseModelOutputWithPoolingAndNoAttention | tuple:
        r"""
        Returns `last_hidden_state` (the last stage's feature map, (B, C, h, w)), `pooler_output` ((B, C)) and
        `hidden_states` (the stem output and every stage's output, (B, C_i, H_i, W_i)).
        """
        output_hidden_states = (
            output_hidden_states if output_hidden_states is not None else self.config.output_hidden_states
        )
        return_dict = return_dict if return_dict is not None else self.config.return_dict
        encoder_outputs = self.encoder(self.embedder(pixel_values), output_hidden_states=output_hidden_states)
        last_hidden_state = encoder_outputs.last_hidden_state
        pooled_output = self.pooler(last_hidden_state).flatten(1)
        if not return_dict:
            extras = () if encoder_outputs.hidden_states is None else (encoder_outputs.hidden_states,)
            return (last_hidden_state, pooled_output, *extras)
        return BaseModelOutputWithPoolingAndNoAttention(
            last_hidden_state=last_hidden_state,
            pooler_output=pooled_output,
            hidden_states=encoder_outputs.hidden_states,
        )


class ParkKimResNetForImageClassification(ParkKimResNetPreTrainedModel):
    """Their ResNet with its linear classifier on the pooled features (their `classifier.0.dense`)."""

    def __init__(self, config: ParkKimResNetConfig):
        super().__init__(config)
        self.num_labels = config.num_labels
        self.resnet = ParkKimResNetModel(config)
        in_features = config.hidden_sizes[-1] * config.expansion
        self.classifier = (
            nn.Linear(in_features, config.num_labels) if config.num_labels > 0 else nn.Identity()
        )
        self.post_init()

    def forward(
        self,
        pixel_values: torch.Tensor | None = None,
        labels: torch.LongTensor | None = None,
        output_hidden_states: bool | None = None,
        return_dict: bool | None = None,
        **kwargs,
    ) -> ImageClassifierOutputWithNoAttention | tuple:
        r"""
        labels (`torch.LongTensor` of shape `(batch_size,)`, *optional*):
            Labels for the classification loss (cross-entropy when `config.num_labels > 1`).
        """
        return_dict = return_dict if return_dict is not None else self.config.return_dict
        outputs = self.resnet(pixel_values, output_hidden_states=output_hidden_states, return_dict=True)
        logits = self.classifier(outputs.pooler_output)
        loss = self.loss_function(labels, logits, self.config) if labels is not None else None
        if not return_dict:
            extras = () if outputs.hidden_states is None else (outputs.hidden_states,)
            return ((loss,) if loss is not None else ()) + (logits,) + extras
        return ImageClassifierOutputWithNoAttention(
            loss=loss, logits=logits, hidden_states=outputs.hidden_states
        )


# `save_pretrained` copies this file (and the configuration file) beside the weights and writes `auto_map`, so that
# the folder loads with `trust_remote_code=True` where hf_vitrobust is not installed.
ParkKimResNetModel.register_for_auto_class("AutoModel")
ParkKimResNetForImageClassification.register_for_auto_class("AutoModelForImageClassification")

__all__ = ["ParkKimResNetForImageClassification", "ParkKimResNetModel", "ParkKimResNetPreTrainedModel"]
