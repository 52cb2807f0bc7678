"""The shipped class tables against facts read from the official evaluation code (sources in
hf_vitrobust/assets/class_lists/SOURCES.md)."""

import pytest
import torch

from hf_vitrobust.data.class_lists import (
    IMAGENET_9_CLASSES,
    imagenet_9_folder_name,
    imagenet_a_classes,
    imagenet_o_classes,
    imagenet_r_classes,
    imagenet_to_imagenet_9,
)
from hf_vitrobust.models.imagenet import IMAGENET_CLASS_NAMES, IMAGENET_WNIDS

SUBSETS = {
    "imagenet-a": imagenet_a_classes,
    "imagenet-r": imagenet_r_classes,
    "imagenet-o": imagenet_o_classes,
}


def test_imagenet_1k_table():
    assert len(IMAGENET_WNIDS) == 1000
    assert IMAGENET_WNIDS[0] == "n01440764" and IMAGENET_CLASS_NAMES[0] == "tench, Tinca tinca"
    assert IMAGENET_WNIDS[285] == "n02124075" and IMAGENET_CLASS_NAMES[285] == "Egyptian cat"
    assert IMAGENET_WNIDS[999] == "n15075141"
    assert list(IMAGENET_WNIDS) == sorted(IMAGENET_WNIDS)


@pytest.mark.parametrize("name", sorted(SUBSETS))
def test_subsets_have_200_classes_in_index_order(name):
    subset = SUBSETS[name]()
    indices = subset.class_indices
    assert subset.name == name and len(subset) == 200 and len(set(indices)) == 200
    assert list(indices) == sorted(indices)
    assert subset.mask.dtype == torch.bool and int(subset.mask.sum()) == 200
    assert torch.equal(subset.mask.nonzero().flatten(), torch.tensor(indices))
    assert [subset.to_imagenet_index(k) for k in (0, 199)] == [indices[0], indices[-1]]
    with pytest.raises(ValueError, match="200 classes"):
        subset.to_imagenet_index(200)


def test_subset_reference_values():
    # natural-adv-examples eval.py, thousand_k_to_200: 6 -> 0, 11 -> 1, 13 -> 2, ..., 988 -> 199.
    assert imagenet_a_classes().class_indices[:5] == (6, 11, 13, 15, 17)
    assert imagenet_a_classes().class_indices[-1] == 988
    # imagenet-r eval.py: the first R wnids are n01443537 (goldfish, 1), n01484850 (great white shark, 2).
    assert imagenet_r_classes().wnids[:2] == ("n01443537", "n01484850")
    assert imagenet_r_classes().class_indices[:3] == (1, 2, 4)
    # eval_many_models.py: imagenet_o_wnids starts with n01443537, n01704323 (triceratops, 51).
    assert imagenet_o_classes().class_indices[:3] == (1, 51, 70)
    # A and R are different subsets with a known overlap; O differs from both.
    a, r, o = (set(SUBSETS[name]().class_indices) for name in ("imagenet-a", "imagenet-r", "imagenet-o"))
    assert a != r and o != a and o != r


def test_imagenet_9_mapping():
    mapping = imagenet_to_imagenet_9()
    assert mapping.shape == (1000,) and mapping.dtype == torch.long
    counts = torch.bincount(mapping[mapping >= 0], minlength=9).tolist()
    # Class sizes of in_to_in9.json (MadryLab/backgrounds_challenge): 370 classes map into the 9 superclasses.
    assert counts == [116, 52, 42, 36, 35, 27, 26, 20, 16]
    assert int((mapping == -1).sum()) == 630
    assert mapping[269].item() == IMAGENET_9_CLASSES.index("carnivore")  # timber wolf
    assert mapping[365].item() == IMAGENET_9_CLASSES.index("primate")  # orangutan
    assert mapping[285].item() == -1  # Egyptian cat: no domestic cats in ImageNet-9's carnivores
    assert mapping[0].item() == IMAGENET_9_CLASSES.index("fish")  # tench
    assert mapping[151].item() == IMAGENET_9_CLASSES.index("dog")  # Chihuahua
    assert mapping[967].item() == -1  # espresso
    assert [imagenet_9_folder_name(k) for k in (0, 8)] == ["00_dog", "08_fish"]
