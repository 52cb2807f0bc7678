#!/usr/bin/env bash
# Run ON THE GPU MACHINE (the device tool), from the repository root, after `benchmarks/gpu/prepare.sh` here:
#
#   run(command="bash benchmarks/gpu/run.sh", carry=[".whl", "official"], timeout_s=600)
#
# One pass over every check that needs a GPU, each step under its own time limit so that a slow step cannot eat
# the others; the limits add up to under 10 minutes, the device tool's limit per command. Logs go to $OUT (at
# most 8 files come back):
#   env.txt          nvidia-smi, python, torch and package versions
#   cuda_tests.txt   tests/corruptions/test_cuda_parity.py: every corruption and ImageNet-P perturbation on CUDA against the CPU;
#                    generated ImageNet-C/-P made on CUDA (GeneratedSource.generate_prepared) against the CPU, with the
#                    end-to-end difference after the JPEG-85 step printed (docs/protocols.md, "Where generated images
#                    are corrupted")
#   corruptions.txt  benchmarks/corruptions.py on cuda, batch 128, against a ViT-B/16 forward (the issue 3 goal)
#   probes.txt       benchmarks/probes.py on cuda: Fourier heat map against the per-frequency loop, DeepFool
#                    against foolbox, PGD against torchattacks, Hessian-vector product against forward+backward
#   alternet.txt     benchmarks/alternet_forward.py on cuda (fp32 and bf16), against the official code if carried
#   demo.txt         the demo suite end to end on cuda (`python -m hf_vitrobust evaluate --device cuda`)
#
# DEVICE=cpu IMAGES=8 runs the same steps on a CPU, to check the script itself before spending device time.
set -uo pipefail
DEVICE="${DEVICE:-cuda}"
IMAGES="${IMAGES:-128}"
OUT="${OUT:-/tmp/gpu-check}"
mkdir -p "$OUT"
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1 MPLBACKEND=Agg
export TOKENIZERS_PARALLELISM=false

python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || { echo "wheel install failed: run benchmarks/gpu/prepare.sh here and carry .whl" | tee "$OUT/env.txt"; exit 1; }
export PYTHONPATH="/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}"

step() {  # step NAME SECONDS COMMAND...: run under a time limit, log to $OUT/NAME.txt, never stop the script
  local name=$1 limit=$2
  shift 2
  local start=$SECONDS
  { echo "\$ $*"; timeout "$limit" "$@"; echo "exit status $? after $((SECONDS - start)) s"; } \
    >>"$OUT/$name.txt" 2>&1
  tail -n 1 "$OUT/$name.txt" | sed "s/^/$name: /"
}

{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  python3 -c "import sys, torch, torchvision, timm, transformers; print(sys.version); print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.is_available() and torch.cuda.get_device_name()); print('torchvision', torchvision.__version__, 'timm', timm.__version__, 'transformers', transformers.__version__)"
  git log --oneline -1 2>/dev/null || true
} >"$OUT/env.txt" 2>&1

step cuda_tests 90 python3 -m pytest -q -p no:cacheprovider -o addopts="" -rsP tests/corruptions/test_cuda_parity.py \
  tests/data/test_generated_device.py::test_generate_prepared_on_a_gpu_within_the_device_tolerance
step corruptions 120 python3 benchmarks/corruptions.py --device "$DEVICE" --images "$IMAGES" --peers none --vit-b16
for part in fourier attacks hessian; do  # one limit each, so that a slow part cannot stop the others
  step probes 60 python3 benchmarks/probes.py --device "$DEVICE" --threads 16 --part "$part"
done
official_args=()
[ -f official/models/alternet.py ] && official_args=(--official-repo official)
step alternet 80 python3 benchmarks/alternet_forward.py --devices "$DEVICE" --batch-size 64 --iters 10 "${official_args[@]}"
step alternet 40 python3 benchmarks/alternet_forward.py --devices "$DEVICE" --batch-size 64 --iters 10 --dtype bfloat16
rm -rf /tmp/demo-cuda
step demo 100 python3 -m hf_vitrobust evaluate --suite demo --device "$DEVICE" --output /tmp/demo-cuda
cp /tmp/demo-cuda/results.json "$OUT/demo_results.json" 2>/dev/null || true
