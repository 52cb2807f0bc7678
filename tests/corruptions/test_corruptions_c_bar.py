"""ImageNet-C-bar's corruptions (hf_vitrobust.corruptions.c_bar) against a transcription of the reference.

Each `reference_*` below transcribes facebookresearch/augmentation-corruption `imagenet_c_bar/corrupt.py` (commit
ba4d5a5) `transform` for one numpy image (H, W, 3) uint8, pixel by pixel as written there, with the random draws
passed in (the ones our `draw_parameters` made, converted per image) instead of drawn, and the value returned
before its final `astype(np.uint8)`. Images are 32x32 (the reference's CIFAR `im_size`; every formula takes im_size
as a parameter) so that the per-pixel loops stay fast.
"""

import math

import numpy as np
import pytest
import torch
from fake_cuda import cpu_values, fake_cuda, is_fake_cuda
from scipy.fftpack import ifft2
from scipy.ndimage import gaussian_filter

from hf_vitrobust.corruptions.c_bar import (
    C_BAR_CORRUPTIONS,
    C_BAR_SEVERITY_PARAMETERS,
    apply_c_bar,
    corrupt_c_bar,
    draw_parameters,
)

SIZE = 32


def float_parameter(level, maxval):
    return float(level) * maxval / 10.0


def bilinear_interpolation(image, point):
    l = int(np.floor(point[0]))  # noqa: E741  (the reference's names)
    u = int(np.floor(point[1]))
    r, d = l + 1, u + 1

    def at(a, b):
        inside = 0 <= a < image.shape[0] and 0 <= b < image.shape[1]
        return image[a, b, :] if inside else np.array([0, 0, 0])

    lu, ld, ru, rd = at(l, u), at(l, d), at(r, u), at(r, d)
    al = lu * (1.0 - point[1] + u) + ld * (1.0 - d + point[1])
    ar = ru * (1.0 - point[1] + u) + rd * (1.0 - d + point[1])
    return al * (1.0 - point[0] + l) + ar * (1.0 - r + point[0])


def reference_single_frequency_greyscale(image, level, frequency, phase):
    intensity = float_parameter(level, 196)
    noise = np.array(
        [[np.sin(x * frequency[0] + y * frequency[1] + phase) for x in range(SIZE)] for y in range(SIZE)]
    )
    return np.clip(image + intensity * np.stack((noise, noise, noise), axis=2), 0, 255)


def reference_cocentric_sine_waves(image, level, offset, frequency, amplitude, ring_width):
    intensity = [float_parameter(level, 128)] * 3

    def calc(x, y, x0, y0):
        angle = np.arctan2(x - x0, y - y0) * frequency
        distance = (
            (np.sqrt((x - x0) ** 2 + (y - y0) ** 2) + np.sin(angle) * amplitude) % ring_width
        ) / ring_width
        return distance - 1 / 2

    noise = np.array([[calc(x, y, offset[0], offset[1]) for x in range(SIZE)] for y in range(SIZE)])
    noise = np.stack([intensity[k] * noise for k in range(3)], axis=2)
    return np.clip(image + noise, 0, 255)


def reference_plasma_noise(image, level, time, iterations, sharpness, scale):
    intensity = float_parameter(level, 64)

    def kernel(x, y):
        x /= scale
        y /= scale
        i = np.array([1.0, 1.0, 1.0, 0.0])
        for _ in range(iterations):
            r = (
                np.array([np.cos(y * i[0] - i[3] + time / i[1]), np.sin(x * i[0] - i[3] + time / i[1])])
                / i[2]
            )
            r += np.array([-r[1], r[0]]) * 0.3
            x += r[0]
            y += r[1]
            i *= np.array([1.93, 1.15, (2.25 - sharpness), time * i[1]])
        return [np.sin(x - time), np.sin((x + y + np.sin(time)) * 0.5), np.sin(y + time)]

    noise = np.array([[kernel(float(x), float(y)) for x in range(SIZE)] for y in range(SIZE)])
    return np.clip((1 - intensity / 255) * image + intensity * noise, 0, 255)


def _sparkle_kernel(point, value, center, radius, ray_lengths, amount, color, inverse):
    rays = len(ray_lengths)
    dp = point - center
    dist = np.linalg.norm(dp)
    angle = np.arctan2(dp[1], dp[0])
    d = (angle + np.pi) / (2 * np.pi) * rays
    i = int(d)
    f = d - i
    if radius != 0:
        length = ray_lengths[i % rays] + f * (ray_lengths[(i + 1) % rays] - ray_lengths[i % rays])
        g = length**2 / (dist**2 + 1e-4)
        g = g ** ((100 - amount) / 50.0)
        f -= 0.5
        f = 1 - f**2
        f *= g
    f = np.clip(f, 0, 1)
    return color + f * (value - color) if inverse else value + f * (color - value)


def reference_sparkles(image, level, centers, ray_lengths_per_sparkle):
    radii = np.array([float_parameter(level, 0.1) for _ in range(5)]) * SIZE
    color = np.array([255, 255, 255])
    for center, radius, ray_lengths in zip(centers, radii, ray_lengths_per_sparkle, strict=True):
        image = np.array(
            [
                [
                    _sparkle_kernel(
                        np.array([y, x]),
                        image[y, x, :].astype(np.float32),
                        center,
                        radius,
                        ray_lengths,
                        50,
                        color,
                        False,
                    )
                    for x in range(SIZE)
                ]
                for y in range(SIZE)
            ]
        )
    return np.clip(image, 0, 255)


def reference_inverse_sparkles(image, level, center, ray_lengths):
    amount = 100 - float_parameter(level, 65)
    radius = 0.25 * SIZE
    color = np.array([255, 255, 255])
    out = np.array(
        [
            [
                _sparkle_kernel(
                    np.array([y, x]),
                    image[y, x, :].astype(np.float32),
                    center,
                    radius,
                    ray_lengths,
                    amount,
                    color,
                    True,
                )
                for x in range(SIZE)
            ]
            for y in range(SIZE)
        ]
    )
    return np.clip(out, 0, 255)


class ReferencePerlin:
    """utils/perlin_noise.py's PerlinNoiseGenerator with its draws given: the integer gradient draws (B, 2) and the
    shuffle's j for i = B - 1 ... 0."""

    def __init__(self, gradient_draws, swaps):
        B = 256
        self.p = np.arange(2 * B + 2)
        g = [(v / B) / np.linalg.norm(v / B) for v in gradient_draws]
        self.g = np.array(g + [g[0]] * (B + 2))
        for step, i in enumerate(np.arange(B - 1, -1, -1)):
            k = self.p[i]
            j = swaps[step]
            self.p[i] = self.p[j]
            self.p[j] = k
        for i in range(B + 2):
            self.p[B + i] = self.p[i]
            self.g[B + i, :] = self.g[i, :]
        self.B, self.N = B, 16 * 256

    @staticmethod
    def s_curve(t):
        return t**2 * (3.0 - 2.0 * t)

    def noise(self, x, y):
        t = x + self.N
        bx0 = int(t) % self.B
        bx1 = (bx0 + 1) % self.B
        rx0 = t % 1
        rx1 = rx0 - 1.0
        t = y + self.N
        by0 = int(t) % self.B
        by1 = (by0 + 1) % self.B
        ry0 = t % 1
        ry1 = ry0 - 1.0
        i, j = self.p[bx0], self.p[bx1]
        b00, b10, b01, b11 = self.p[i + by0], self.p[j + by0], self.p[i + by1], self.p[j + by1]
        sx, sy = self.s_curve(rx0), self.s_curve(ry0)
        u = rx0 * self.g[b00, 0] + ry0 * self.g[b00, 1]
        v = rx1 * self.g[b10, 0] + ry0 * self.g[b10, 1]
        a = u + sx * (v - u)
        u = rx0 * self.g[b01, 0] + ry1 * self.g[b01, 1]
        v = rx1 * self.g[b11, 0] + ry1 * self.g[b11, 1]
        b = u + sx * (v - u)
        return 1.5 * (a + sy * (b - a))

    def turbulence(self, x, y, octaves):
        t, f = 0.0, 1.0
        while f <= octaves:
            t += np.abs(self.noise(f * x, f * y)) / f
            f = f * 2
        return t


def reference_perlin_noise(image, level, gradients, swaps):
    m = np.array([[1, 0], [0, 1]]) / (32 * SIZE / 224)
    alpha = float_parameter(level, 0.50)
    noise = ReferencePerlin(gradients, swaps)

    def kernel(point):
        npoint = np.matmul(point, m)
        f = 0.5 * noise.turbulence(npoint[0], npoint[1], 16.0) + 0.5
        return np.clip(np.array([f, f, f]), 0, 1.0)

    pattern = np.array([[kernel(np.array([y, x])) for x in range(SIZE)] for y in range(SIZE)])
    return np.clip((1 - alpha) * image.astype(np.float32) + 255 * alpha * pattern, 0, 255)


def reference_gen_noise(phases, power_of):
    center = SIZE / 2
    power = np.array(
        [[power_of(np.linalg.norm(np.array([x, y]) - center)) for x in range(SIZE)] for y in range(SIZE)]
    )
    phases = np.concatenate((phases, phases[::-1, ::-1]), axis=1)
    spectrum = power * (np.cos(phases) + np.sin(phases) * 1j)
    spectrum = np.roll(np.roll(spectrum, SIZE // 2, axis=0), SIZE // 2, axis=1)
    noise = np.real(ifft2(spectrum))
    return noise / np.std(noise)


def reference_blue_noise_sample(image, level, phases):
    threshold = float_parameter(level, 3.0) - 2.5
    noise = reference_gen_noise(phases[0], lambda n: n)
    return np.clip(image * (noise > threshold).reshape(SIZE, SIZE, 1), 0, 255)


def reference_brownish_noise(image, level, phases):
    intensity = float_parameter(level, 64)
    noise = np.stack([reference_gen_noise(phases[k], lambda n: 1 / (n**2 + 1)) for k in range(3)], axis=2)
    return np.clip(image + intensity * noise, 0, 255)


def reference_checkerboard_cutout(image, level, angle, scale, uniforms):
    fraction = float_parameter(level, 1.0)
    scales = (scale, scale)
    cells = int(4 * SIZE // scales[0])
    grid = uniforms[:cells, :cells] < fraction

    def keep(point):
        nx = (np.cos(angle) * point[0] + np.sin(angle) * point[1]) / scales[0]
        ny = (-np.sin(angle) * point[0] + np.cos(angle) * point[1]) / scales[1]
        return (int(nx % 2) != int(ny % 2)) or not grid[int(nx), int(ny)]

    out = np.array(
        [
            [image[y, x, :] if keep([y, x]) else np.array([128, 128, 128]) for x in range(SIZE)]
            for y in range(SIZE)
        ]
    )
    return np.clip(out, 0, 255)


def reference_caustic_refraction(image, level, time, size):
    eta, lens_scale, lighting_amount = 4.0, float_parameter(level, 0.5 * SIZE), float_parameter(level, 2.0)

    def caustic_noise_kernel(point):
        point = point / size
        p = (point % 1) * 6.28318530718 - 250
        i = p.copy()
        c = 1.0
        inten = 0.005
        for n in range(5):
            t = time * (1.0 - (3.5 / (n + 1)))
            i = p + np.array([np.cos(t - i[0]) + np.sin(t + i[1]), np.sin(t - i[1]) + np.cos(t + i[0])])
            length = np.sqrt(
                (p[0] / (np.sin(i[0] + t) / inten)) ** 2 + (p[1] / (np.cos(i[1] + t) / inten)) ** 2
            )
            c += 1.0 / length
        c /= 5.0
        c = 1.17 - c**1.4
        color = np.clip(np.abs(c) ** 8.0, 0, 1)
        return np.array([color, color, color])

    def refract(incident, normal):
        if np.abs(np.dot(incident, normal)) >= 1.0 - 1e-3:
            return incident
        angle = np.arccos(np.dot(incident, normal))
        out_angle = np.arcsin(np.sin(angle) / eta)
        out_unrotated = np.array([np.cos(out_angle), np.sin(out_angle), 0.0])
        spectator_dim = np.cross(incident, normal)
        spectator_dim /= np.linalg.norm(spectator_dim)
        orthogonal_dim = np.cross(normal, spectator_dim)
        rotation_matrix = np.stack((normal, orthogonal_dim, spectator_dim), axis=0)
        return np.matmul(np.linalg.inv(rotation_matrix), out_unrotated)

    def luma_at_offset(image, origin, offset):
        a, b = origin[0] + offset[0], origin[1] + offset[1]
        inside = 0 <= a < image.shape[0] and 0 <= b < image.shape[1]
        pixel_value = image[a, b, :] if inside else np.array([0.0, 0.0, 0])
        return np.dot(pixel_value, np.array([0.2126, 0.7152, 0.0722]))

    def luma_based_refract(point, image, caustics):
        north_luma = luma_at_offset(caustics, point, np.array([0, -1]))
        south_luma = luma_at_offset(caustics, point, np.array([0, 1]))
        west_luma = luma_at_offset(caustics, point, np.array([-1, 0]))
        east_luma = luma_at_offset(caustics, point, np.array([1, 0]))
        lens_normal = np.array([east_luma - west_luma, south_luma - north_luma, 1.0])
        lens_normal = lens_normal / np.linalg.norm(lens_normal)
        refract_vector = refract(np.array([0.0, 0.0, 1.0]), lens_normal) * lens_scale
        refract_vector = np.round(refract_vector, 3)
        out_pixel = bilinear_interpolation(image, point + refract_vector[0:2])
        out_pixel += (north_luma - south_luma) * lighting_amount
        out_pixel += (east_luma - west_luma) * lighting_amount
        return np.clip(out_pixel, 0, 1)

    noise = np.array([[caustic_noise_kernel(np.array([y, x])) for x in range(SIZE)] for y in range(SIZE)])
    noise = gaussian_filter(noise, sigma=1)
    image = image.astype(np.float32) / 255
    out = np.array(
        [[luma_based_refract(np.array([y, x]), image, noise) for x in range(SIZE)] for y in range(SIZE)]
    )
    return out * 255  # the reference truncates out * 255 to uint8


def reference_arguments(name, draws, n):
    """The reference transform's draws for image n, from ours."""
    d = {key: value[n].numpy() for key, value in draws.items()}
    if name == "single_frequency_greyscale":
        return {"frequency": d["frequency"], "phase": float(d["phase"])}
    if name == "cocentric_sine_waves":
        return {
            k: (d[k] if k == "offset" else float(d[k]))
            for k in ("offset", "frequency", "amplitude", "ring_width")
        }
    if name == "plasma_noise":
        return {
            "time": float(d["time"]),
            "iterations": int(d["iterations"]),
            "sharpness": float(d["sharpness"]),
            "scale": float(d["scale"]),
        }
    if name == "sparkles":
        return {
            "centers": d["centers"],
            "ray_lengths_per_sparkle": None,
            "_noise": d["ray_noise"],
            "_rays": d["rays"],
        }
    if name == "inverse_sparkles":
        radius = 0.25 * SIZE
        rays = int(d["rays"])
        return {
            "center": d["center"],
            "ray_lengths": [radius + 0.25 * radius * z for z in d["ray_noise"][:rays]],
        }
    if name == "perlin_noise":
        return {"gradients": d["gradients"], "swaps": d["swaps"]}
    if name in ("blue_noise_sample", "brownish_noise"):
        return {"phases": d["phases"]}
    if name == "checkerboard_cutout":
        return {"angle": float(d["angle"]), "scale": float(d["scale"]), "uniforms": d["grid"]}
    return {"time": float(d["time"]), "size": float(d["size"])}


REFERENCES = {name: globals()[f"reference_{name}"] for name in C_BAR_CORRUPTIONS}


def _uint8_images(count, seed):
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(0, 256, (count, 3, SIZE, SIZE), generator=generator, dtype=torch.uint8)


@pytest.mark.parametrize("name", C_BAR_CORRUPTIONS)
def test_each_corruption_matches_the_transcribed_reference_with_the_same_draws(name):
    images = _uint8_images(2, seed=3)
    ids = torch.tensor([7, 2**33 + 1])
    draws = draw_parameters(name, SIZE, seed=5, sample_ids=ids)
    level = C_BAR_SEVERITY_PARAMETERS[name][3]
    ours = apply_c_bar(images.double(), name, level, draws)
    for n in range(2):
        arguments = reference_arguments(name, draws, n)
        if name == "sparkles":
            radius = float_parameter(level, 0.1) * SIZE
            noise, rays = arguments.pop("_noise"), arguments.pop("_rays")
            arguments["ray_lengths_per_sparkle"] = [
                [max(1, radius + 25 / 100.0 * radius * z) for z in noise[k][: int(rays[k])]] for k in range(5)
            ]
        expected = REFERENCES[name](images[n].permute(1, 2, 0).numpy(), level, **arguments)
        actual = ours[n].permute(1, 2, 0).numpy()
        # float64 both; the reference's float32 steps (image.astype(np.float32)) are reproduced.
        np.testing.assert_allclose(actual, expected, rtol=0, atol=1e-6, err_msg=name)
    # The pattern is not trivial: the corruption changes the image.
    assert (ours.floor() != images.double()).any()


@pytest.mark.parametrize(
    "name", ["single_frequency_greyscale", "sparkles", "perlin_noise", "checkerboard_cutout"]
)
def test_draws_depend_on_the_sample_id_only_not_the_batch(name):
    images = _uint8_images(3, seed=4)
    ids = [11, 12, 13]
    together = corrupt_c_bar(images, name, 2, seed=1, sample_ids=ids)
    alone = torch.cat(
        [corrupt_c_bar(images[k : k + 1], name, 2, seed=1, sample_ids=[ids[k]]) for k in range(3)]
    )
    assert torch.equal(together, alone)
    assert not torch.equal(together, corrupt_c_bar(images, name, 2, seed=2, sample_ids=ids))
    # uint8 output is the float output (value / 255) truncated, as the reference's astype(np.uint8).
    as_float = corrupt_c_bar(images.float() / 255, name, 2, seed=1, sample_ids=ids)
    assert (as_float * 255 - together.float()).abs().max() < 1 + 1e-3
    assert (
        as_float.dtype == torch.float32
        and corrupt_c_bar(images.double() / 255, name, 2).dtype == torch.float64
    )


def test_draws_follow_the_reference_distributions():
    """A few of the reference's distributions, checked on 4,000 images' draws: ranges and means."""
    ids = torch.arange(4000)
    plasma = draw_parameters("plasma_noise", 224, 0, ids)
    assert set(plasma["iterations"].tolist()) == {4, 5, 6}
    assert plasma["scale"].min() >= 0.075 * 224 and plasma["scale"].max() <= 0.2 * 224
    sparkles = draw_parameters("sparkles", 224, 0, ids)
    assert sparkles["rays"].min() == 50 and sparkles["rays"].max() == 199
    assert (
        abs(float(sparkles["ray_noise"].mean())) < 0.01 and abs(float(sparkles["ray_noise"].std()) - 1) < 0.01
    )
    frequency = draw_parameters("single_frequency_greyscale", 224, 0, ids)["frequency"]
    # freq_2 is uniform within +-|freq_mag|, and the two are swapped half the time.
    assert (frequency.abs().max(dim=1).values <= math.pi).all()
    assert 0.45 < float((frequency[:, 0].abs() >= frequency[:, 1].abs()).double().mean()) < 0.55
    perlin = draw_parameters("perlin_noise", 224, 0, ids[:50])
    assert perlin["gradients"].min() == -256 and perlin["gradients"].max() == 255
    assert perlin["swaps"].min() == 0 and perlin["swaps"].max() == 255


def test_bad_names_severities_and_shapes_are_refused_with_the_valid_ones():
    images = _uint8_images(1, seed=1)
    with pytest.raises(ValueError, match="sparkles"):
        corrupt_c_bar(images, "sparkle", 1)
    with pytest.raises(ValueError, match="severity must be an integer from 1 to 5"):
        corrupt_c_bar(images, "sparkles", 6)
    with pytest.raises(ValueError, match="square"):
        corrupt_c_bar(images[..., :30], "sparkles", 1)


def test_the_release_severity_parameters():
    """imagenet_c_bar.csv's parameters, in the release's corruption order."""
    assert sorted(C_BAR_SEVERITY_PARAMETERS) == sorted(C_BAR_CORRUPTIONS) and len(C_BAR_CORRUPTIONS) == 10
    assert C_BAR_SEVERITY_PARAMETERS["caustic_refraction"] == (2.35, 3.2, 4.9, 6.6, 9.15)
    assert C_BAR_SEVERITY_PARAMETERS["blue_noise_sample"] == (0.8, 1.6, 2.4, 4.0, 5.6)


@pytest.mark.parametrize("name", C_BAR_CORRUPTIONS)
def test_each_corruption_runs_on_the_device_with_the_cpu_values(name):
    """With the images on CUDA (emulated on the CPU by tests/fake_cuda.py): no op mixes devices, the output stays on
    the device, and its values are the CPU run's bit for bit (the draws are counter-based, not the device's RNG)."""
    images = _uint8_images(2, seed=9)
    expected = corrupt_c_bar(images, name, 4, seed=3, sample_ids=[4, 8])
    with fake_cuda() as recorder:
        actual = corrupt_c_bar(images.to("cuda"), name, 4, seed=3, sample_ids=[4, 8])
    assert not recorder.violations, recorder.report()
    assert is_fake_cuda(actual) and torch.equal(cpu_values(actual), expected)
