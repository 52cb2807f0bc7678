"""`hf_vitrobust.constants` holds each fixed fact once; these tests hold it to its references."""

import timm.data
import transformers.image_utils

from hf_vitrobust import constants


def test_mean_and_std_are_transformers_and_timm_imagenet_defaults():
    assert tuple(transformers.image_utils.IMAGENET_DEFAULT_MEAN) == constants.IMAGENET_DEFAULT_MEAN
    assert tuple(transformers.image_utils.IMAGENET_DEFAULT_STD) == constants.IMAGENET_DEFAULT_STD
    assert tuple(timm.data.IMAGENET_DEFAULT_MEAN) == constants.IMAGENET_DEFAULT_MEAN
    assert tuple(timm.data.IMAGENET_DEFAULT_STD) == constants.IMAGENET_DEFAULT_STD


def test_corruption_names_are_the_reference_packages_in_its_order():
    import imagecorruptions

    assert tuple(imagecorruptions.get_corruption_names("common")) == constants.STANDARD_CORRUPTIONS
    assert tuple(imagecorruptions.get_corruption_names("validation")) == constants.EXTRA_CORRUPTIONS
    assert constants.SEVERITIES == (1, 2, 3, 4, 5)


def test_the_corruption_and_perturbation_tables_agree_with_the_constants():
    from hf_vitrobust.corruptions import CORRUPTIONS, PERTURBATIONS, registered_corruptions
    from hf_vitrobust.metrics import ALEXNET_CORRUPTION_ERRORS, TEST_PERTURBATIONS

    assert tuple(ALEXNET_CORRUPTION_ERRORS) == constants.ALL_CORRUPTIONS
    assert (
        tuple(name for name in constants.ALL_CORRUPTIONS if name in registered_corruptions()) == CORRUPTIONS
    )
    assert set(constants.ALL_CORRUPTIONS) <= set(registered_corruptions())
    assert PERTURBATIONS == constants.PERTURBATIONS and TEST_PERTURBATIONS == constants.TEST_PERTURBATIONS
    assert constants.NOISE_PERTURBATIONS == ("gaussian_noise", "shot_noise", "speckle_noise")


def test_the_imagenet_9_table_is_read_once_for_data_and_metrics():
    from hf_vitrobust.data.class_lists import imagenet_to_imagenet_9
    from hf_vitrobust.metrics import IMAGENET_TO_IN9, IN9_CLASSES, VARIANTS

    table = constants.imagenet_to_imagenet_9()
    assert len(table) == constants.IMAGENET_NUM_CLASSES
    assert imagenet_to_imagenet_9().tolist() == list(table) == IMAGENET_TO_IN9.tolist()
    assert IN9_CLASSES == constants.IMAGENET_9_CLASSES and VARIANTS == constants.IMAGENET_9_VARIANTS
    # Xiao et al.'s in_to_in9.json: goldfish (1) is a fish (8), class 0 (tench) too; 4 of the 9 are checked here.
    assert (table[0], table[1], table[151], table[404]) == (8, 8, 0, -1)
    counts = [table.count(k) for k in range(9)]
    assert sum(counts) + table.count(-1) == 1000 and min(counts) > 0


def test_label_spaces():
    assert constants.LABEL_SPACE_CLASSES == {
        "imagenet-1k": 1000,
        "imagenet-9": 1000,
        "cifar10": 10,
        "cifar100": 100,
    }
    assert constants.DEFAULT_MODEL.startswith("builtin:")
