"""Conformance of `attention_rollout` with Paul & Chen's attention-rollout notebook.

The reference below transcribes `rollout` from `analysis/attention_maps/Visualizing_ViT.ipynb` of
sayakpaul/robustness-vit (commit cf940dfcdd304ba021a9158456e0f67b8c03f994, cell 15, "Taken from:
https://github.com/jacobgil/vit-explain/blob/main/vit_rollout.py", identical to that file), run one image at a
time as the notebook does (its forward hooks collect (1, heads, T, T) attention). `keepdim=True` gives the
row-normalised rollout; the notebook's own line has no keepdim.
"""

import inspect

import numpy as np
import pytest
import torch
from probe_models import random_images, timm_vit

from hf_vitrobust.models.cam_targets import TokenLayout
from hf_vitrobust.probes.attention import (
    ROLLOUT_NORMALIZATIONS,
    attention_maps,
    attention_rollout,
    normalize_maps,
    token_readout,
)
from hf_vitrobust.probes.spec import PROBES

QUIRK = "paul-chen-notebook"
BATCH, HEADS, GRID = 2, 3, 4
TOKENS = 1 + GRID * GRID


def notebook_rollout(attentions, discard_ratio, head_fusion, keepdim=False):
    """The notebook's `rollout` for one image (attentions: (1, heads, T, T) float32), returning `result`
    (1, T, T) and `mask` (the CLS row over the patches, divided by its max) as it computes them."""
    result = torch.eye(attentions[0].size(-1))
    with torch.no_grad():
        for attention in attentions:
            if head_fusion == "mean":
                attention_heads_fused = attention.mean(axis=1)
            elif head_fusion == "max":
                attention_heads_fused = attention.max(axis=1)[0]
            elif head_fusion == "min":
                attention_heads_fused = attention.min(axis=1)[0]

            # Drop the lowest attentions, but
            # don't drop the class token
            flat = attention_heads_fused.view(attention_heads_fused.size(0), -1)
            _, indices = flat.topk(int(flat.size(-1) * discard_ratio), -1, False)
            indices = indices[indices != 0]
            flat[0, indices] = 0

            I = torch.eye(attention_heads_fused.size(-1))  # noqa: E741 (the notebook's name)
            a = (attention_heads_fused + 1.0 * I) / 2
            a = a / a.sum(dim=-1, keepdim=keepdim)

            result = torch.matmul(a, result)

    mask = result[0, 0, 1:]
    width = int(mask.size(-1) ** 0.5)
    mask = mask.reshape(width, width).numpy()
    mask = mask / np.max(mask)
    return result, mask


def random_attentions(layers=3, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return [
        (2.0 * torch.randn(BATCH, HEADS, TOKENS, TOKENS, generator=generator)).softmax(dim=-1)
        for _ in range(layers)
    ]


@pytest.mark.parametrize("head_fusion", ["mean", "max", "min"])
@pytest.mark.parametrize("discard_ratio", [0.0, 0.9])
@pytest.mark.parametrize("normalization", ["rows", QUIRK])
def test_rollout_matches_the_notebook_transcription(head_fusion, discard_ratio, normalization):
    attentions = random_attentions()
    ours = attention_rollout(
        attentions, head_fusion=head_fusion, discard_ratio=discard_ratio, normalization=normalization
    )
    cls_maps = normalize_maps(token_readout(ours, TokenLayout(1, (GRID, GRID)), class_token=True))
    for n in range(BATCH):
        result, mask = notebook_rollout(
            [a[n : n + 1].clone() for a in attentions],
            discard_ratio,
            head_fusion,
            keepdim=normalization == "rows",
        )
        torch.testing.assert_close(ours[n : n + 1], result)
        torch.testing.assert_close(cls_maps[n], torch.from_numpy(mask))
    # Cumulative rollouts end in the same matrix.
    cumulative = attention_rollout(
        attentions,
        head_fusion=head_fusion,
        discard_ratio=discard_ratio,
        normalization=normalization,
        cumulative=True,
    )
    torch.testing.assert_close(cumulative[-1], ours)


def test_default_is_row_normalised_plain_rollout():
    for function in (attention_rollout, attention_maps):
        parameters = inspect.signature(function).parameters
        assert parameters["normalization"].default == "rows"
        assert parameters["discard_ratio"].default == 0.0
        assert parameters["head_fusion"].default == "mean"
    attentions = [a.double() for a in random_attentions()]
    default = attention_rollout(attentions)
    expected = torch.eye(TOKENS, dtype=torch.float64).expand(BATCH, TOKENS, TOKENS)
    for attention in attentions:
        expected = (0.5 * attention.mean(dim=1) + 0.5 * torch.eye(TOKENS, dtype=torch.float64)) @ expected
    torch.testing.assert_close(default, expected)
    torch.testing.assert_close(default.sum(dim=-1), torch.ones(BATCH, TOKENS, dtype=torch.float64))


def test_quirk_differs_from_rows_only_when_row_sums_differ():
    attentions = random_attentions()
    # Row-stochastic mean-fused attention, nothing discarded: every row of (A + I) / 2 sums to 1, so dividing
    # column j by row j's sum is the same as dividing row j by it.
    torch.testing.assert_close(
        attention_rollout(attentions, normalization=QUIRK), attention_rollout(attentions)
    )
    # The notebook's discard_ratio=0.9 leaves unequal row sums: the two rollouts and their CLS maps differ.
    rows = attention_rollout(attentions, discard_ratio=0.9)
    quirk = attention_rollout(attentions, discard_ratio=0.9, normalization=QUIRK)
    assert not torch.allclose(rows, quirk, rtol=1e-3, atol=1e-4)
    torch.testing.assert_close(rows.sum(dim=-1), torch.ones(BATCH, TOKENS))
    assert not torch.allclose(quirk.sum(dim=-1), torch.ones(BATCH, TOKENS), rtol=1e-3, atol=1e-4)
    layout = TokenLayout(1, (GRID, GRID))
    rows_map = normalize_maps(token_readout(rows, layout, class_token=True))
    quirk_map = normalize_maps(token_readout(quirk, layout, class_token=True))
    assert not torch.allclose(rows_map, quirk_map, rtol=1e-3, atol=1e-4)
    # By hand, one fused layer whose rows do not sum to 1: the quirk divides columns, "rows" divides rows.
    a = torch.tensor([[[0.8, 0.2], [0.1, 0.3]]], dtype=torch.float64)  # (A + I) rows sum to 2.0 and 1.4
    torch.testing.assert_close(
        attention_rollout([a], normalization=QUIRK)[0],
        torch.tensor([[1.8 / 2.0, 0.2 / 1.4], [0.1 / 2.0, 1.3 / 1.4]], dtype=torch.float64),
    )
    torch.testing.assert_close(
        attention_rollout([a])[0],
        torch.tensor([[1.8 / 2.0, 0.2 / 2.0], [0.1 / 1.4, 1.3 / 1.4]], dtype=torch.float64),
    )


def test_bad_normalization_names_the_valid_ones():
    assert ROLLOUT_NORMALIZATIONS == ("rows", QUIRK)
    for bad in ("columns", "paul_chen", None, 1):
        with pytest.raises(
            ValueError, match=r"normalization must be one of \('rows', 'paul-chen-notebook'\)"
        ):
            attention_rollout(random_attentions(1), normalization=bad)


@pytest.fixture(scope="module")
def vit():
    return timm_vit()


def test_probe_passes_the_notebook_protocol_through(vit):
    """The "attention" task of the suites accepts the keyword and the probe's maps are the notebook's masks."""
    params = {"method": None, "head_fusion": "mean", "discard_ratio": 0.9, "normalization": QUIRK}
    checked = PROBES["attention"].check_params(params)
    assert checked["normalization"] == QUIRK
    images = random_images(2)
    result = attention_maps(
        vit, images, upsample=False, head_fusion="mean", discard_ratio=0.9, normalization=QUIRK
    )
    with torch.no_grad():
        attentions = [a.float().cpu() for a in vit.attention_maps(images).values()]
    side = result.maps.shape[-1]
    assert attentions[0].shape[-1] == 1 + side * side  # one prefix (CLS) token, as in the notebook's ViT
    for n in range(2):
        _, mask = notebook_rollout([a[n : n + 1].clone() for a in attentions], 0.9, "mean")
        torch.testing.assert_close(result.maps[n], torch.from_numpy(mask), atol=1e-5, rtol=1e-5)
    rows = attention_maps(vit, images, upsample=False, discard_ratio=0.9)
    assert not torch.allclose(rows.maps, result.maps, rtol=1e-3, atol=1e-4)
    with pytest.raises(ValueError, match="paul-chen-notebook"):
        attention_maps(vit, images, normalization="columns")
