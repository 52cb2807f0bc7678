"""AlterNet forward-pass throughput and peak memory, ours against the official implementation.

Measures images/s of an inference forward pass (eval mode, no grad) at a fixed batch and resolution, on the CPU and,
when there is one, on the GPU. Timing runs the implementations in one process in alternating rounds, so that drift
in the machine's speed hits both alike; the table gives the median and the best round. Peak memory comes from a fresh
subprocess per implementation: peak RSS above the post-import baseline on the CPU, `torch.cuda.max_memory_allocated`
on the GPU.

With `--official-repo PATH` (a local copy of github xxxnell/how-do-vits-work), the official model is built from
that copy, our model gets the same weights through `hf_vitrobust.models.alternet.convert_alternet_to_hf`, the max |delta logit|
between the two is reported, and both are timed the same way. The official code is read from PATH at run time and
is never part of this project.

    python benchmarks/alternet_forward.py --official-repo /tmp/how-do-vits-work
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import torch

from hf_vitrobust.models.alternet import AlterNetConfig, AlterNetForImageClassification
from hf_vitrobust.models.alternet.convert_alternet_to_hf import convert_official_state_dict

# Our preset name -> (official builder in models/alternet.py, extra kwargs).
OFFICIAL_BUILDERS = {
    "alternet-18": ("dnn_18", {}),
    "alternet-34": ("dnn_34", {}),
    "alternet-50": ("dnn_50", {}),
    "alternet-101": ("dnn_101", {}),
    "alternet-152": ("dnn_152", {}),
}


def build_official(repo: str, variant: str, num_labels: int) -> torch.nn.Module:
    if variant not in OFFICIAL_BUILDERS:
        raise SystemExit(f"No official builder for {variant}; choose one of {sorted(OFFICIAL_BUILDERS)}.")
    sys.path.insert(0, os.path.abspath(repo))
    import models.alternet as official  # the user's local copy, at run time

    name, kwargs = OFFICIAL_BUILDERS[variant]
    return getattr(official, name)(num_classes=num_labels, **kwargs)


def build_ours(variant: str, num_labels: int, official_state_path: str | None) -> torch.nn.Module:
    config = AlterNetConfig.from_preset(variant, num_labels=num_labels)
    model = AlterNetForImageClassification(config)
    if official_state_path:
        state = torch.load(official_state_path, weights_only=True)
        model.load_state_dict(convert_official_state_dict(state, config), strict=True)
    return model


def randomise_batch_norm(model: torch.nn.Module, seed: int) -> None:
    """Give BN non-trivial statistics so that a parity check cannot pass by accident."""
    generator = torch.Generator().manual_seed(seed)
    for module in model.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            shape = module.running_mean.shape
            module.running_mean.copy_(torch.randn(shape, generator=generator) * 0.1)
            module.running_var.copy_(torch.rand(shape, generator=generator) + 0.5)
            module.weight.data.copy_(1 + torch.randn(shape, generator=generator) * 0.1)
            module.bias.data.copy_(torch.randn(shape, generator=generator) * 0.1)


def load_model(args: argparse.Namespace, impl: str, state_path: str) -> torch.nn.Module:
    """`impl` ("ours" or "official") with the benchmark's weights, in eval mode on `args.device`."""
    if impl == "official":
        model = build_official(args.official_repo, args.variant, args.num_labels)
        model.load_state_dict(torch.load(state_path, weights_only=True))
    elif args.official_repo:
        model = build_ours(args.variant, args.num_labels, state_path)
    else:
        model = build_ours(args.variant, args.num_labels, None)
        model.load_state_dict(torch.load(state_path, weights_only=True))
    return model.to(device=args.device, dtype=getattr(torch, args.dtype)).eval()


def forward_fn(model: torch.nn.Module, pixels: torch.Tensor):
    def forward() -> None:
        model(pixels)
        if pixels.device.type == "cuda":
            torch.cuda.synchronize()

    return forward


def current_rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def memory_worker(args: argparse.Namespace) -> None:
    """Peak memory of one implementation's forward pass, in a fresh process; prints a JSON line."""
    baseline = current_rss_mib()
    model = load_model(args, args.impl, args.state)
    pixels = torch.randn(args.batch_size, 3, args.image_size, args.image_size, device=args.device)
    pixels = pixels.to(getattr(torch, args.dtype))
    if args.device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    with torch.inference_mode():
        for _ in range(2):
            forward_fn(model, pixels)()
    if args.device.startswith("cuda"):
        peak, kind = torch.cuda.max_memory_allocated() / 2**20, "torch.cuda.max_memory_allocated"
    else:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - baseline
        kind = "peak RSS above the process's RSS after imports"
    print(json.dumps({"impl": args.impl, "peak_mib": peak, "memory": kind}))


def time_alternating(args: argparse.Namespace, impls: list[str], state_path: str) -> dict[str, list[float]]:
    """Seconds per batch of each implementation, measured in one process in alternating order (ABBA...), so that
    drift in the machine's speed affects both alike."""
    pixels = torch.randn(args.batch_size, 3, args.image_size, args.image_size, device=args.device)
    pixels = pixels.to(getattr(torch, args.dtype))
    forwards = {impl: forward_fn(load_model(args, impl, state_path), pixels) for impl in impls}
    timings: dict[str, list[float]] = {impl: [] for impl in impls}
    with torch.inference_mode():
        for _ in range(args.warmup):
            for forward in forwards.values():
                forward()
        for round_index in range(args.iters):
            for impl in impls if round_index % 2 == 0 else impls[::-1]:
                start = time.perf_counter()
                forwards[impl]()
                timings[impl].append(time.perf_counter() - start)
    return timings


def time_attention_blocks(args: argparse.Namespace, state_path: str) -> None:
    """Per-MSA-block timings, ours against official, alternating, on the block's real input shape.

    The two models run the same convolutions and norms; the MSA blocks are where the implementations differ.
    """
    official = load_model(args, "official", state_path)
    ours = load_model(args, "ours", state_path)
    pixels = torch.randn(args.batch_size, 3, args.image_size, args.image_size, device=args.device)
    with torch.inference_mode():
        stage_inputs = ours.alternet(
            pixels.to(getattr(torch, args.dtype)), output_hidden_states=True
        ).hidden_states
        print(f"{'MSA block':<18} {'input':<20} {'ours ms':>8} {'official ms':>12}")
        for stage_index, stage in enumerate(ours.alternet.encoder.stages):
            hidden = stage_inputs[stage_index]
            for block_index, block in enumerate(stage.layers):
                if block_index > 0 and hasattr(block, "attention"):
                    official_block = getattr(official, f"layer{stage_index + 1}")[block_index]
                    blocks = {
                        "ours": lambda b=block, h=hidden: b(h),
                        "official": lambda b=official_block, h=hidden: b(h),
                    }
                    timings = {name: [] for name in blocks}
                    for round_index in range(2 * args.iters + args.warmup):
                        order = list(blocks) if round_index % 2 == 0 else list(blocks)[::-1]
                        for name in order:
                            start = time.perf_counter()
                            blocks[name]()
                            if hidden.device.type == "cuda":
                                torch.cuda.synchronize()
                            if round_index >= args.warmup:
                                timings[name].append(time.perf_counter() - start)
                    medians = {name: 1000 * sorted(t)[len(t) // 2] for name, t in timings.items()}
                    shape = "x".join(str(d) for d in hidden.shape)
                    print(f"stage {stage_index + 1} block {block_index:<4} {shape:<20} "
                          f"{medians['ours']:>8.1f} {medians['official']:>12.1f}")  # fmt: skip
                hidden = block(hidden)[0]


def parity(args: argparse.Namespace, state_path: str) -> float:
    """Max |delta logit| between the official model and ours with the same weights, on random inputs (CPU, fp32)."""
    official = build_official(args.official_repo, args.variant, args.num_labels)
    official.load_state_dict(torch.load(state_path, weights_only=True))
    ours = build_ours(args.variant, args.num_labels, state_path)
    pixels = torch.randn(4, 3, args.image_size, args.image_size, generator=torch.Generator().manual_seed(1))
    with torch.inference_mode():
        reference = official.eval()(pixels)
        delta = (ours.eval()(pixels).logits - reference).abs().max().item()
    print(
        f"parity {args.variant}: max |delta logit| = {delta:.3e} (logits up to {reference.abs().max():.3f})"
    )
    return delta


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--variant", default="alternet-50")
    parser.add_argument("--num-labels", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--image-size", type=int, default=224)
    parser.add_argument(
        "--devices", default=None, help="Comma-separated; default: cpu, and cuda when available."
    )
    parser.add_argument("--dtype", default="float32", choices=("float32", "bfloat16", "float16"))
    parser.add_argument("--iters", type=int, default=10, help="Timed rounds per implementation.")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default).")
    parser.add_argument("--official-repo", default=None, help="Local copy of xxxnell/how-do-vits-work.")
    parser.add_argument("--impl", choices=("ours", "official"), help=argparse.SUPPRESS)
    parser.add_argument("--device", help=argparse.SUPPRESS)
    parser.add_argument("--state", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.threads:
        torch.set_num_threads(args.threads)
    if args.impl:
        memory_worker(args)
        return
    devices = (
        args.devices.split(",") if args.devices else ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    )
    if args.official_repo and not os.path.isfile(os.path.join(args.official_repo, "models", "alternet.py")):
        raise SystemExit(f"--official-repo {args.official_repo!r} has no models/alternet.py.")

    with tempfile.TemporaryDirectory() as tmp:
        state_path = os.path.join(tmp, "state.pt")
        torch.manual_seed(0)
        if args.official_repo:
            model = build_official(args.official_repo, args.variant, args.num_labels)
        else:
            model = build_ours(args.variant, args.num_labels, None)
        randomise_batch_norm(model, seed=0)
        torch.save(model.state_dict(), state_path)
        del model
        if args.official_repo:
            parity(args, state_path)

        impls = ["ours", "official"] if args.official_repo else ["ours"]
        print(
            f"{args.variant}, batch {args.batch_size}, {args.image_size}x{args.image_size}, {args.dtype}, "
            f"{args.iters} alternating rounds after {args.warmup} warm-up, {torch.get_num_threads()} CPU threads"
        )
        print(f"{'impl':<9} {'device':<6} {'img/s median':>12} {'img/s best':>10} {'peak MiB':>9}  memory")
        for device in devices:
            args.device = device
            timings = time_alternating(args, impls, state_path)
            for impl in impls:
                command = [
                    sys.executable,
                    __file__,
                    "--impl",
                    impl,
                    "--device",
                    device,
                    "--state",
                    state_path,
                ]
                for flag in ("variant", "num_labels", "batch_size", "image_size", "dtype", "threads"):
                    command += [f"--{flag.replace('_', '-')}", str(getattr(args, flag))]
                if args.official_repo:
                    command += ["--official-repo", args.official_repo]
                result = subprocess.run(command, capture_output=True, text=True)
                if result.returncode != 0:
                    raise SystemExit(f"{impl} on {device} failed:\n{result.stderr[-3000:]}")
                memory = json.loads(result.stdout.strip().splitlines()[-1])
                seconds = sorted(timings[impl])
                median, best = seconds[len(seconds) // 2], seconds[0]
                print(
                    f"{impl:<9} {device:<6} {args.batch_size / median:>12.2f} {args.batch_size / best:>10.2f} "
                    f"{memory['peak_mib']:>9.0f}  {memory['memory']}"
                )
            if args.official_repo:
                time_attention_blocks(args, state_path)


if __name__ == "__main__":
    main()
