"""ImageNet-C corruption throughput: ours against the maintained peers, per core and per machine, with fidelity.

For every registered corruption (all five severities together) and for the whole set, it measures images/s at
224x224 on the same uint8 crops of scikit-image photos:

- ours (`hf_vitrobust.corruptions.corrupt`, one batched call per severity) with one torch thread (per core) and
  with one thread per core of the machine (per machine);
- each peer installed by `benchmarks/peers/install.sh` in its own venv, through `benchmarks/peers/peer_timing.py`
  (its per-image `corrupt` call, NumPy's global seed set per severity): `imagecorruptions-imaug` 1.1.5,
  `corrupt-tta` 0.1.7 and the reference `imagecorruptions` 1.1.2. Per core: one process, one thread (OpenMP,
  OpenBLAS, numba and OpenCV held to one). Per machine: one such process per core, all at once, on the same images;
  the rate is the sum of the processes' rates (how a user runs a per-image NumPy package on a multi-core machine).

Rounds alternate (ours, then each peer, then again), and each figure is the best of the rounds.

Fidelity: a peer is only a fair yardstick where it is faithful to the reference. For every corruption and
severity, the mean SSIM and mean PSNR of corrupted against clean images (over the batch) are compared with the
reference's, with the tolerance of the tests (`tests/reference_corruptions.assert_statistics_match`: the
reference's own spread over its seeds, at least 0.03 SSIM and 1 dB); deterministic corruptions must also lie
within a mean absolute difference of 2 grey levels of the reference's output (the tests' `MAX_MEAN_ABS_DIFF`). The
reference's two rounds run under seeds 0 and 1, which gives its spread. Two seeds on a few images underrate how
much a random corruption's statistics move from seed to seed: with `--images 2`, our own spatter (seed 0) was once
flagged (PSNR 4.2 dB from the reference's mean), while with the default 8 images every corruption of ours passes. "Fastest faithful peer" is the fastest
peer that passes for that corruption; the whole-set comparison takes each peer's whole set (a user picks one
package) among the peers faithful on every corruption, and also names the fastest peer regardless.

`--vit-b16` also times a ViT-B/16 forward pass (timm's vit_base_patch16_224 with random weights, eval mode,
inference mode, fp32 and bf16 autocast) on the same batch and device, and prints each corruption's throughput as a
multiple of it: the yardstick for on-the-fly ImageNet-C on a GPU. Peers run on the CPU only; `--peers none` skips
them (for `--device cuda`).

    bash benchmarks/peers/install.sh
    OMP_NUM_THREADS=1 python benchmarks/corruptions.py --images 8 --rounds 2 --json corruptions.json
    python benchmarks/corruptions.py --device cuda --images 128 --peers none --vit-b16
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import skimage.data
import torch
import torch.nn.functional as F

from hf_vitrobust.corruptions import CORRUPTIONS, corrupt

ROOT = Path(__file__).resolve().parents[1]
PEER_SCRIPT = ROOT / "benchmarks" / "peers" / "peer_timing.py"
# Peer name (peer_timing.py's argument) -> its venv under .peer-venvs/ (install.sh).
PEER_VENVS = {
    "imagecorruptions-imaug": "imagecorruptions-imaug",
    "corrupt-tta": "corrupt-tta",
    "imagecorruptions": "imagecorruptions-1.1.2",
}
REFERENCE = "imagecorruptions"
PHOTOS = ("astronaut", "chelsea", "coffee", "rocket", "immunohistochemistry", "hubble_deep_field", "retina")
# Corruptions that draw no random numbers in the reference (imagecorruptions 1.1.2 corruptions.py).
DETERMINISTIC = (
    "defocus_blur", "zoom_blur", "gaussian_blur", "brightness", "contrast", "saturate", "pixelate", "jpeg_compression",
)  # fmt: skip
# The fidelity tolerances of the tests (tests/reference_corruptions.py, test_corruptions_color_digital.py).
SSIM_FLOOR, PSNR_FLOOR, MAX_MEAN_ABS_DIFF = 0.03, 1.0, 2.0


def photo_batch(count: int, size: int = 224) -> torch.Tensor:
    """`count` uint8 images (count, 3, size, size): scikit-image's colour photos, resized, cycled as needed."""
    images = []
    for name in PHOTOS:
        array = getattr(skimage.data, name)()
        tensor = torch.from_numpy(np.ascontiguousarray(array[..., :3])).permute(2, 0, 1)[None].float()
        images.append(
            F.interpolate(tensor, size=(size, size), mode="bilinear", antialias=True).round().byte()
        )
    batch = torch.cat(images)
    return batch[torch.arange(count) % len(batch)]


def seconds(fn, device: str = "cpu") -> float:
    start = time.perf_counter()
    fn()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter() - start


def ours_round(images: torch.Tensor, names: list[str], threads: int, device: str) -> dict[str, list[float]]:
    """Seconds per severity of one batched `corrupt` call per (corruption, severity), on `threads` torch threads."""
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        timings = {}
        for name in names:
            corrupt(images[:2], name, 1)  # warm-up: kernels, caches, lazy loads
            timings[name] = [seconds(lambda s=s, n=name: corrupt(images, n, s), device) for s in range(1, 6)]
        return timings
    finally:
        torch.set_num_threads(previous)


def ours_outputs(images: torch.Tensor, names: list[str]) -> dict[tuple[str, int], np.ndarray]:
    """Our uint8 outputs (N, H, W, 3) per (corruption, severity), seed 0, for the fidelity check."""
    return {
        (name, severity): corrupt(images, name, severity).permute(0, 2, 3, 1).cpu().numpy()
        for name in names
        for severity in range(1, 6)
    }


def peer_python(peer: str) -> Path:
    return ROOT / ".peer-venvs" / PEER_VENVS[peer] / "bin" / "python"


def peer_environment() -> dict[str, str]:
    """One thread for every pool a peer may use; OpenBLAS's core-type overrides of this machine removed (they slow
    a current NumPy; see the environment notes), for the peer's process only."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    return env


def peer_round(
    peer: str, images_file: Path, names: list[str], processes: int, seed: int, outputs: Path | None
) -> dict[str, float]:
    """Images/s per corruption of `processes` single-threaded processes of `peer` at once (the sum of their rates).

    The first process saves its outputs under `outputs` when given."""
    command = [str(peer_python(peer)), str(PEER_SCRIPT), peer, "--images", str(images_file), "--rounds", "1"]
    command += ["--seed", str(seed), *[arg for name in names for arg in ("--corruption", name)]]
    runs = [
        subprocess.Popen(
            command + (["--outputs", str(outputs)] if outputs is not None and index == 0 else []),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=peer_environment(),
        )
        for index in range(processes)
    ]
    rates: dict[str, float] = dict.fromkeys(names, 0.0)
    for run in runs:
        stdout, stderr = run.communicate()
        if run.returncode != 0:
            raise RuntimeError(f"{peer} failed ({run.returncode}):\n{stderr[-3000:]}")
        for line in stdout.splitlines():
            row = json.loads(line)
            rates[row["corruption"]] += 5 * row["images"] / sum(row["seconds"])
    return rates


def statistics(clean: np.ndarray, corrupted: np.ndarray) -> tuple[float, float]:
    """Mean SSIM and mean PSNR (dB) of uint8 (N, H, W, 3) corrupted images against the clean ones."""
    from skimage.metrics import peak_signal_noise_ratio, structural_similarity

    ssims, psnrs = [], []
    for a, b in zip(clean, corrupted, strict=True):
        ssims.append(structural_similarity(a, b, channel_axis=-1, data_range=255))
        psnrs.append(peak_signal_noise_ratio(a, b, data_range=255) if (a != b).any() else 100.0)
    return float(np.mean(ssims)), float(np.mean(psnrs))


def reference_statistics(
    clean: np.ndarray, reference: dict[tuple[str, int], list[np.ndarray]]
) -> dict[tuple[str, int], np.ndarray]:
    """(seeds, 2) mean SSIM and PSNR of the reference's outputs per (corruption, severity), one row per seed."""
    return {key: np.array([statistics(clean, out) for out in outs]) for key, outs in reference.items()}


def fidelity(
    clean: np.ndarray,
    outputs: dict[tuple[str, int], np.ndarray],
    reference: dict[tuple[str, int], list[np.ndarray]],
    names: list[str],
    reference_stats: dict[tuple[str, int], np.ndarray] | None = None,
) -> dict[str, dict]:
    """Per corruption: whether `outputs` pass the tests' fidelity tolerances against the reference at every
    severity, with the worst SSIM and PSNR gaps (and, for deterministic corruptions, mean absolute difference).
    `reference_stats` (`reference_statistics` of `reference`) saves recomputing them when several are judged."""
    if reference_stats is None:
        reference_stats = reference_statistics(clean, reference)
    verdicts = {}
    for name in names:
        worst = {"ssim_gap": 0.0, "psnr_gap": 0.0, "mean_abs_diff": 0.0}
        faithful = True
        for severity in range(1, 6):
            ref_stats = reference_stats[(name, severity)]
            ours = np.array(statistics(clean, outputs[(name, severity)]))
            spread = ref_stats.max(0) - ref_stats.min(0)
            tolerance = np.maximum(spread, [SSIM_FLOOR, PSNR_FLOOR])
            gap = np.abs(ours - ref_stats.mean(0))
            faithful &= bool((gap <= tolerance).all())
            worst["ssim_gap"] = max(worst["ssim_gap"], float(gap[0]))
            worst["psnr_gap"] = max(worst["psnr_gap"], float(gap[1]))
            if name in DETERMINISTIC:
                diff = np.abs(
                    outputs[(name, severity)].astype(np.float64)
                    - reference[(name, severity)][0].astype(np.float64)
                )
                per_image = diff.reshape(len(diff), -1).mean(1).max()
                worst["mean_abs_diff"] = max(worst["mean_abs_diff"], float(per_image))
                faithful &= bool(per_image <= MAX_MEAN_ABS_DIFF)
        verdicts[name] = {"faithful": faithful, **{k: round(v, 4) for k, v in worst.items()}}
    return verdicts


def load_outputs(folder: Path, names: list[str], seed: int) -> dict[tuple[str, int], np.ndarray]:
    return {(n, s): np.load(folder / f"{n}-{s}-seed{seed}.npy") for n in names for s in range(1, 6)}


def vit_b16_rates(images: torch.Tensor, repeats: int = 5) -> dict[str, float]:
    """Images/s of a ViT-B/16 forward pass on `images` (uint8, 224x224) in fp32 and under bf16 autocast, best of
    `repeats` after a warm-up; the input is normalised as the model expects, outside the timing."""
    import timm

    model = timm.create_model("vit_base_patch16_224", pretrained=False).to(images.device).eval()
    pixels = (images.float() / 255 - 0.5) / 0.5
    device = images.device.type
    rates = {}
    for precision, dtype in (("fp32", None), ("bf16", torch.bfloat16)):
        with (
            torch.inference_mode(),
            torch.autocast(device, dtype=dtype or torch.float32, enabled=dtype is not None),
        ):
            model(pixels)
            best = min(seconds(lambda: model(pixels), str(images.device)) for _ in range(repeats))
        rates[precision] = len(images) / best
    return rates


def whole_set(rates: dict[str, float], names: list[str]) -> float:
    """Images/s over the whole set: every corruption at every severity once per image."""
    return len(names) / sum(1.0 / rates[name] for name in names)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--images", type=int, default=8, help="images per severity, ours and each peer")
    parser.add_argument("--rounds", type=int, default=2, help="alternating rounds; each figure is the best")
    parser.add_argument("--device", default="cpu", help="ours only; peers run on the CPU")
    parser.add_argument("--cores", type=int, default=os.cpu_count(), help="per machine: threads / processes")
    parser.add_argument("--corruption", action="append", help="only these (repeatable)")
    parser.add_argument(
        "--peers", nargs="+", default=list(PEER_VENVS), help=f"of {list(PEER_VENVS)}, or 'none'"
    )
    parser.add_argument("--vit-b16", action="store_true", help="compare with a ViT-B/16 forward pass")
    parser.add_argument("--json", type=Path, help="write every figure here")
    args = parser.parse_args()
    args.peers = [] if args.peers == ["none"] else args.peers
    unknown = sorted(set(args.peers) - set(PEER_VENVS))
    if unknown:
        parser.error(f"unknown peers {unknown}; choose from {list(PEER_VENVS)} or 'none'")
    missing = [p for p in args.peers if not peer_python(p).exists()]
    if missing:
        parser.error(f"peers not installed: {missing}; run `bash benchmarks/peers/install.sh`")
    if args.peers and REFERENCE not in args.peers:
        parser.error(f"the fidelity check needs the reference: add {REFERENCE} to --peers")
    if args.peers and not args.device.startswith("cpu"):
        parser.error("peers run on the CPU; use --peers none with --device cuda")
    return args


def main() -> None:
    args = parse_args()
    names = args.corruption or list(CORRUPTIONS)
    batch = photo_batch(args.images)
    ours_batch = batch.to(args.device)
    print(f"{len(names)} corruptions x 5 severities, {args.images} images at 224x224, {args.rounds} alternating "
          f"rounds, per machine = {args.cores} threads (ours) / processes (peers), torch {torch.__version__}")  # fmt: skip
    best: dict[str, dict[str, float]] = {}

    def keep(label: str, rates: dict[str, float]) -> None:
        current = best.setdefault(label, dict.fromkeys(names, 0.0))
        for name, rate in rates.items():
            current[name] = max(current[name], rate)

    with tempfile.TemporaryDirectory() as scratch:
        images_file = Path(scratch) / "images.npy"
        np.save(images_file, batch.permute(0, 2, 3, 1).contiguous().numpy())
        outputs = {peer: Path(scratch) / peer for peer in args.peers}
        for round_index in range(args.rounds):
            for label, threads in (("ours per core", 1), ("ours per machine", args.cores)):
                timings = ours_round(ours_batch, names, threads, args.device)
                keep(label, {n: 5 * args.images / sum(t) for n, t in timings.items()})
            for peer in args.peers:
                keep(f"{peer} per core", peer_round(peer, images_file, names, 1, round_index, outputs[peer]))
                keep(
                    f"{peer} per machine", peer_round(peer, images_file, names, args.cores, round_index, None)
                )
            print(f"round {round_index + 1} done", flush=True)
        verdicts = {}
        if args.peers:
            clean = batch.permute(0, 2, 3, 1).numpy()
            by_seed = [load_outputs(outputs[REFERENCE], names, seed) for seed in range(args.rounds)]
            reference = {key: [outputs_of_seed[key] for outputs_of_seed in by_seed] for key in by_seed[0]}
            reference_stats = reference_statistics(clean, reference)
            judged = {"ours": ours_outputs(batch, names)}
            judged |= {
                peer: load_outputs(outputs[peer], names, 0) for peer in args.peers if peer != REFERENCE
            }
            for label, outputs_of_label in judged.items():
                verdicts[label] = fidelity(clean, outputs_of_label, reference, names, reference_stats)
            verdicts[REFERENCE] = {name: {"faithful": True} for name in names}

    vit = vit_b16_rates(ours_batch) if args.vit_b16 else None
    summary = print_table(best, verdicts, names, args.peers, vit)
    if args.json is not None:
        record = {
            "images": args.images, "rounds": args.rounds, "cores": args.cores, "torch": torch.__version__,
            "rates": best, "fidelity": verdicts, "vit_b16": vit, "summary": summary,
        }  # fmt: skip
        args.json.write_text(json.dumps(record, indent=2) + "\n")


def print_table(
    best: dict[str, dict[str, float]],
    verdicts: dict[str, dict],
    names: list[str],
    peers: list[str],
    vit: dict[str, float] | None,
) -> dict[str, dict]:
    """Print the per-corruption table and the whole set; return, per corruption, the fastest faithful peer per
    core and our ratios against it."""
    short = {"imagecorruptions-imaug": "imaug", "corrupt-tta": "tta", "imagecorruptions": "1.1.2"}
    header = f"{'corruption':<18} {'ours/core':>9} {'ours/mach':>9}"
    for peer in peers:
        header += f" {short[peer] + '/core':>11} {short[peer] + '/mach':>11}"
    if peers:
        header += f"  {'fastest faithful peer':<22} {'x/core':>7} {'x/mach':>7}"
    if vit:
        header += f" {'x ViT fp32':>11} {'x ViT bf16':>11}"
    print(header)
    summary = {}
    rows = [*names, "whole set"]
    for name in rows:
        if name == "whole set":
            rate = {label: whole_set(values, names) for label, values in best.items()}
            faithful = [
                p for p in peers if all(verdicts.get(p, {}).get(n, {}).get("faithful") for n in names)
            ]
        else:
            rate = {label: values[name] for label, values in best.items()}
            faithful = [p for p in peers if verdicts.get(p, {}).get(name, {}).get("faithful")]
        line = f"{name:<18} {rate['ours per core']:>9.1f} {rate['ours per machine']:>9.1f}"
        for peer in peers:
            mark = "" if peer in faithful else "*"
            line += f" {rate[peer + ' per core']:>10.1f}{mark or ' '} {rate[peer + ' per machine']:>10.1f}{mark or ' '}"
        if peers:
            fastest = max(faithful, key=lambda p: rate[p + " per core"])
            per_core = rate["ours per core"] / rate[fastest + " per core"]
            per_machine = rate["ours per machine"] / rate[fastest + " per machine"]
            line += f"  {fastest:<22} {per_core:>6.2f}x {per_machine:>6.2f}x"
            anyone = max(peers, key=lambda p: rate[p + " per core"])
            summary[name] = {
                "fastest_faithful_peer": fastest,
                "ours_per_core_ratio": round(per_core, 3),
                "ours_per_machine_ratio": round(per_machine, 3),
                "fastest_peer": anyone,
                "ours_per_core_ratio_fastest_peer": round(
                    rate["ours per core"] / rate[anyone + " per core"], 3
                ),
            }
        if vit:
            line += f" {rate['ours per machine'] / vit['fp32']:>10.2f}x {rate['ours per machine'] / vit['bf16']:>10.2f}x"
        print(line)
    if peers:
        print(
            "* not faithful to the reference on this corruption (see the docstring's criterion); worst gaps:"
        )
        for peer in [p for p in verdicts if p != REFERENCE]:
            for name in names:
                verdict = verdicts[peer][name]
                if not verdict["faithful"]:
                    print(f"  {peer} {name}: SSIM gap {verdict['ssim_gap']}, PSNR gap {verdict['psnr_gap']} dB, "
                          f"mean abs diff {verdict['mean_abs_diff']}")  # fmt: skip
    if vit:
        print(f"ViT-B/16 forward: fp32 {vit['fp32']:.1f} img/s, bf16 autocast {vit['bf16']:.1f} img/s")
    return summary


if __name__ == "__main__":
    sys.exit(main())
