# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""One probe of `hf_vitrobust.probes` (occlusion, Fourier heat map, DeepFool, ...) over a dataset, on any number of
processes.

    accelerate launch examples/probe_over_dataset.py --model timm/vit_base_patch16_224 --benchmark imagenet-r \
        --data axiong/imagenet-r --probe occlusion --params '{"ratios": [0, 0.1, 0.2, 0.5]}' --limit 512

The first `--limit` images of the stream are cut into chunks of `--batch-size` images; each process reads the raw
stream and decodes only every N-th chunk, runs the probe's `ProbeSpec.run` on it, and the main process merges the
gathered partials in chunk order with `ProbeSpec.merge`: the same chunks and the same merge, so 1 and N processes
give the same numbers. Each image's randomness (a hole, a noise draw) is keyed by its sample id, as when the probe
function runs on the whole dataset at once.
"""

import argparse
import itertools
import json

import torch
from accelerate import Accelerator
from accelerate.utils import gather_object
from PIL import Image
from tqdm.auto import tqdm

from hf_vitrobust import load_classifier
from hf_vitrobust.corruptions.export import stable_sample_index
from hf_vitrobust.data import load_benchmark
from hf_vitrobust.data.samples import decode_raw_sample
from hf_vitrobust.probes import PROBES, get_probe


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="One probe over a dataset.")
    parser.add_argument(
        "--model", default="builtin:efficientnet_lite0", help="Hub id, folder, timm/<name>, builtin:<name>"
    )
    parser.add_argument(
        "--benchmark", default="imagenet-val", help="the label space: imagenet-val, imagenet-r, ..."
    )
    parser.add_argument("--data", default="builtin", help="a Hub id, local folder, parquet file or builtin")
    parser.add_argument("--probe", default="occlusion", choices=PROBES.names())
    parser.add_argument("--params", default="{}", help="the probe's keyword arguments, as JSON")
    parser.add_argument("--limit", type=int, default=16, help="images")
    parser.add_argument(
        "--batch-size", type=int, default=None, help="images per chunk (default: the probe's)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", default=None, help="a JSON file for the numbers")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    accelerator = Accelerator()
    spec = get_probe(args.probe)
    params = spec.check_params(json.loads(args.params))
    accelerator.print(f"loading {args.model} and {args.data} ({accelerator.num_processes} process(es))")
    classifier = load_classifier(args.model, device=accelerator.device)
    spec.check_applicable(classifier, params)
    source = load_benchmark(args.benchmark, args.data, limit=args.limit)
    chunk_size = args.batch_size or spec.chunk_length(params)

    partials = []
    raw = source.raw_samples()
    chunks = iter(lambda: list(itertools.islice(raw, chunk_size)), [])  # until the stream ends
    what = f"{args.probe}: chunks of {chunk_size} images"
    for index, chunk in enumerate(tqdm(chunks, what, unit="chunk", disable=not accelerator.is_main_process)):
        if index % accelerator.num_processes != accelerator.process_index:
            continue  # another process's chunk: never decoded here
        samples = [sample for item in chunk if (sample := decode_raw_sample(item, source.report)) is not None]
        if not samples:
            continue
        images = [Image.fromarray(sample.image.permute(1, 2, 0).numpy()) for sample in samples]
        pixels = classifier.preprocessing.to_tensor(images).to(accelerator.device)
        labels = torch.tensor([sample.label for sample in samples])
        ids = torch.tensor([stable_sample_index(sample.sample_id) for sample in samples])
        partials.append((index, spec.run(classifier, pixels, labels, ids, args.seed, params)))

    # Each chunk once (keyed by its index), merged in chunk order.
    chunks_per_process = gather_object([len(partials)])
    gathered = dict(gather_object(partials))
    accelerator.end_training()  # every process leaves the process group before it exits
    if not accelerator.is_main_process:
        return
    merged = spec.merge([gathered[index] for index in sorted(gathered)])
    print(f"{args.probe} of {args.model} on {args.data} ({accelerator.num_processes} process(es)):")
    for row, value in spec.table(merged).items():
        print(f"  {row}: {value}")
    if args.output:
        numbers = {"model": args.model, "data": args.data, "chunks_per_process": chunks_per_process}
        with open(args.output, "w", encoding="utf-8") as handle:
            json.dump({**numbers, "params": params, "result": merged}, handle, indent=2)


if __name__ == "__main__":
    main()
