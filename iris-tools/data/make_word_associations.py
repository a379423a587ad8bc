"""Builds `word_associations.txt`, the table of related English words that
Iris's local tool search uses when a request and a tool describe the same
thing in different words ("temperature" and "weather").

Where the relations come from: the all-MiniLM-L6-v2 sentence encoder
(Apache-2.0), run on each whole English word of its own vocabulary, one
word at a time. Words that share a Snowball stem are averaged into one
vector per stem; each stem keeps its closest stems by cosine similarity.
Nothing here looks at any tool catalog or evaluation set.

Run it with the encoder's files in a folder (config.json, model.safetensors,
tokenizer.json, vocab.txt) and numpy, safetensors, tokenizers and
snowballstemmer installed:

    python make_word_associations.py MODEL_DIR > word_associations.txt
"""

import json
import re
import sys
from pathlib import Path

import numpy as np
import snowballstemmer
from safetensors.numpy import load_file
from tokenizers import Tokenizer

NEIGHBOURS = 6
MIN_SIMILARITY = 0.65
BATCH = 512


def layer_norm(x, weight, bias, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def gelu(x):
    return 0.5 * x * (1.0 + erf(x / np.sqrt(2.0)))


def erf(x):
    """Abramowitz and Stegun 7.1.26: absolute error below 1.5e-7, well under
    what float32 layers keep."""
    sign = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-x * x))


class Encoder:
    """A BERT forward pass in numpy with mean pooling, as the encoder's
    sentence-transformers configuration specifies."""

    def __init__(self, folder):
        self.config = json.loads((folder / "config.json").read_text())
        self.w = load_file(str(folder / "model.safetensors"))
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()

    def encode(self, words):
        c, w = self.config, self.w
        ids = [self.tokenizer.encode(word).ids for word in words]
        length = max(len(i) for i in ids)
        batch = np.zeros((len(ids), length), dtype=np.int64)
        mask = np.zeros((len(ids), length), dtype=np.float32)
        for row, i in enumerate(ids):
            batch[row, : len(i)] = i
            mask[row, : len(i)] = 1.0
        eps = c["layer_norm_eps"]
        x = (
            w["embeddings.word_embeddings.weight"][batch]
            + w["embeddings.position_embeddings.weight"][:length][None]
            + w["embeddings.token_type_embeddings.weight"][0][None, None]
        )
        x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
        heads = c["num_attention_heads"]
        size = c["hidden_size"] // heads
        bias = (1.0 - mask)[:, None, None, :] * -1e9
        for layer in range(c["num_hidden_layers"]):
            p = f"encoder.layer.{layer}."

            def dense(name, v):
                return v @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            def split(v):
                return v.reshape(v.shape[0], length, heads, size).transpose(0, 2, 1, 3)

            q = split(dense("attention.self.query", x))
            k = split(dense("attention.self.key", x))
            v = split(dense("attention.self.value", x))
            scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(size) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            attended = (scores @ v).transpose(0, 2, 1, 3).reshape(x.shape)
            x = layer_norm(
                dense("attention.output.dense", attended) + x,
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
                eps,
            )
            hidden = gelu(dense("intermediate.dense", x))
            x = layer_norm(
                dense("output.dense", hidden) + x,
                w[p + "output.LayerNorm.weight"],
                w[p + "output.LayerNorm.bias"],
                eps,
            )
        pooled = (x * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def main():
    folder = Path(sys.argv[1])
    vocabulary = (folder / "vocab.txt").read_text().split("\n")
    words = sorted({t for t in vocabulary if re.fullmatch(r"[a-z]{3,}", t)})
    encoder = Encoder(folder)
    vectors = np.concatenate(
        [encoder.encode(words[i : i + BATCH]) for i in range(0, len(words), BATCH)]
    )
    stemmer = snowballstemmer.stemmer("english")
    by_stem = {}
    for word, vector in zip(words, vectors):
        by_stem.setdefault(stemmer.stemWord(word), []).append(vector)
    stems = sorted(by_stem)
    matrix = np.stack([np.mean(by_stem[s], axis=0) for s in stems])
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    print(f"# {len(stems)} stems from {len(words)} words", file=sys.stderr)
    for start in range(0, len(stems), BATCH):
        similarity = matrix[start : start + BATCH] @ matrix.T
        for row, sims in enumerate(similarity):
            me = start + row
            sims[me] = -1.0
            best = np.argpartition(-sims, NEIGHBOURS)[:NEIGHBOURS]
            best = best[np.argsort(-sims[best])]
            kept = [(stems[j], sims[j]) for j in best if sims[j] >= MIN_SIMILARITY]
            if kept:
                line = " ".join(f"{s}:{round(float(v) * 100)}" for s, v in kept)
                print(f"{stems[me]} {line}")


if __name__ == "__main__":
    main()
