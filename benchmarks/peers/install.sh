#!/usr/bin/env bash
# Install the ImageNet-C peers that benchmarks/corruptions.py times against, each in its own venv under
# .peer-venvs/ (git-ignored), so that none of them touches the package's own environment:
#   imagecorruptions-1.1.2  the reference of Hendrycks & Dietterich (2020; needs setuptools<81 and shims, applied by
#                           benchmarks/peers/peer_timing.py)
#   imagecorruptions-imaug  1.1.5, the 2026 drop-in fork (numba glass blur)
#   corrupt-tta             0.1.7, numpy/OpenCV, all 19 corruptions
# Usage: bash benchmarks/peers/install.sh [PYTHON]   (default: python3)
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON="${1:-python3}"
ROOT=.peer-venvs
mkdir -p "$ROOT"
install() {  # install <venv name> <packages...>
  local name="$1"; shift
  if [ -x "$ROOT/$name/bin/python" ] && "$ROOT/$name/bin/python" -c "import numpy, skimage" 2>/dev/null; then
    echo "$ROOT/$name: present"
  else
    "$PYTHON" -m venv "$ROOT/$name"
    "$ROOT/$name/bin/pip" install --quiet --upgrade pip
  fi
  "$ROOT/$name/bin/pip" install --quiet "$@"
  "$ROOT/$name/bin/pip" freeze > "$ROOT/$name/versions.txt"
  echo "$ROOT/$name: $(grep -i -E '^(imagecorruptions|corrupt-tta|numpy|scikit-image|opencv|numba)' "$ROOT/$name/versions.txt" | tr '\n' ' ')"
}
# 1.1.2 pins the GUI build of OpenCV; its run-time needs are installed explicitly and it goes in with --no-deps.
install imagecorruptions-1.1.2 "numpy>=2" "scikit-image>=0.22" scipy "setuptools<81" opencv-python-headless
"$ROOT/imagecorruptions-1.1.2/bin/pip" install --quiet --no-deps imagecorruptions==1.1.2
"$ROOT/imagecorruptions-1.1.2/bin/pip" freeze > "$ROOT/imagecorruptions-1.1.2/versions.txt"
install imagecorruptions-imaug imagecorruptions-imaug==1.1.5 opencv-python-headless
install corrupt-tta corrupt-tta==0.1.7 opencv-python-headless
