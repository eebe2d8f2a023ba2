"""``tracemill export``: every format's rows, the data card, decontamination and refusals.

Each test runs a real offline ``generate`` and ``split`` on its own copy of the production
store (see conftest.py), exports through the real command line and reads the files back
against the stored rollouts.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from generator.decontaminate import SEMANTIC_NOT_RUN
from generator.exports import ExportError, ExportOptions, export, load_export_data
from generator.exports.preference import length_bias, make_pairs
from tests.generator.conftest import ReadRollouts, RunCli, StoreCopy
from tracemill.store import open_store

pytestmark = pytest.mark.integration


def _store(run_cli: RunCli, store_copy: StoreCopy, name: str = "export.duckdb") -> Path:
    db = store_copy(name)
    result = run_cli(["generate", "--db", str(db), "--no-progress", "--json",
                      "--agent", "offline:0.3", "--budget", "80", "--seed", "3"])
    assert result.code == 0, result.err
    # the same plan against a sloppier agent: the same openings, other outcomes
    again = run_cli(["generate", "--db", str(db), "--no-progress", "--json", "--fresh",
                     "--agent", "offline:0.6", "--budget", "80", "--seed", "3"])
    assert again.code == 0, again.err
    split = run_cli(["split", "--db", str(db), "--held-out", "0.3"])
    assert split.code == 0, split.err
    return db


def _export(run_cli: RunCli, db: Path, out: Path, fmt: str, *args: str) -> dict[str, Any]:
    result = run_cli(["export", "--db", str(db), "--format", fmt, "--out", str(out),
                      "--json", *args])
    assert result.code == 0, result.err
    assert "semantic rule not run: no embedder configured" in result.err
    card: dict[str, Any] = result.json()
    return card


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _sides(db: Path) -> dict[str, str]:
    store = open_store(db, read_only=True)
    try:
        return dict(store.query("SELECT s.rollout_id, p.side FROM rollout_situations AS s "
                                "JOIN splits AS p USING (situation_key)"))
    finally:
        store.close()


def _check_messages(messages: list[dict[str, Any]], stored: list[dict[str, Any]]) -> None:
    calls: dict[str, str] = {}
    assert [m["role"] for m in messages] == [m["role"] for m in stored]
    for m, s in zip(messages, stored, strict=True):
        if m["role"] == "assistant":
            for call, raw in zip(m.get("tool_calls") or (), s["tool_calls"], strict=True):
                assert call["type"] == "function" and call["id"] == raw["id"]
                assert call["function"]["name"] == raw["name"]
                assert isinstance(call["function"]["arguments"], dict)
                assert call["function"]["arguments"] == json.loads(raw["arguments"])
                calls[call["id"]] = call["function"]["name"]
        elif m["role"] == "tool":
            assert set(m) == {"role", "name", "tool_call_id", "content"}
            assert m["name"] == calls[m["tool_call_id"]]
            assert m["content"] == s["content"]
        else:
            assert m["content"] == s["content"]


def test_sft_rows_and_loss_masks(run_cli: RunCli, store_copy: StoreCopy,
                                 read_rollouts: ReadRollouts, tmp_path: Path) -> None:
    db = _store(run_cli, store_copy)
    stored = {r["rollout_id"]: r for r in read_rollouts(db)}
    sides = _sides(db)
    card = _export(run_cli, db, tmp_path / "sft", "sft")
    tools = json.loads((tmp_path / "sft" / "tools.json").read_text())
    assert {t["function"]["name"] for t in tools} == set(card["tools"])
    for side in ("train", "held_out"):
        rows = _jsonl(tmp_path / "sft" / f"{side}.jsonl")
        assert rows and len(rows) == card["files"][f"{side}.jsonl"]
        for row in rows:
            assert set(row) == {"messages", "tools", "loss_mask", "rollout_id"}
            raw = stored[row["rollout_id"]]
            assert sides[row["rollout_id"]] == side
            assert raw["passed"] and raw["mutation_fired"] is not False
            _check_messages(row["messages"], json.loads(raw["messages"]))
            assert row["messages"][0]["role"] == "system"
            assert row["tools"] == tools
            # the loss is on the agent's turns, never the person's or the world's
            assert row["loss_mask"] == [int(m["role"] == "assistant")
                                        for m in row["messages"]]
    final = _export(run_cli, db, tmp_path / "final", "sft", "--loss-mask", "final-turn")
    assert final["format_counts"] == {"loss_mask": "final-turn"}
    for row in _jsonl(tmp_path / "final" / "train.jsonl"):
        roles = [m["role"] for m in row["messages"]]
        answered = max(i for i, r in enumerate(roles) if r == "user"
                       and "assistant" in roles[i + 1:])
        assert row["loss_mask"] == [int(r == "assistant" and i > answered)
                                    for i, r in enumerate(roles)]
        assert sum(row["loss_mask"]) >= 1


def test_trl_rows_are_exactly_trl_column_sets(run_cli: RunCli, store_copy: StoreCopy,
                                              read_rollouts: ReadRollouts,
                                              tmp_path: Path) -> None:
    db = _store(run_cli, store_copy)
    stored = {r["rollout_id"]: r for r in read_rollouts(db)}
    _export(run_cli, db, tmp_path / "trl", "trl", "--allow-length-bias")
    columns = {"messages": {"messages", "tools"}, "prompt_completion": {"prompt", "completion"},
               "preference": {"prompt", "chosen", "rejected"},
               "kto": {"prompt", "completion", "label"}}
    for folder, keys in columns.items():
        rows = _jsonl(tmp_path / "trl" / folder / "train.jsonl")
        assert rows, folder
        for row in rows:
            assert set(row) == keys, folder
            for key in keys - {"tools", "label"}:
                assert isinstance(row[key], list) and row[key], (folder, key)
                assert all("role" in m for m in row[key])
    for row in _jsonl(tmp_path / "trl" / "prompt_completion" / "train.jsonl"):
        assert row["prompt"][-1]["role"] == "user"
        assert row["completion"][0]["role"] == "assistant"
        assert all(m["role"] != "user" for m in row["completion"])
    labels = {row["label"] for row in _jsonl(tmp_path / "trl" / "kto" / "train.jsonl")}
    assert labels == {True, False}
    assert all(isinstance(stored, dict) for stored in stored.values())


def test_preference_pairs_share_situation_and_prompt(run_cli: RunCli, store_copy: StoreCopy,
                                                     read_rollouts: ReadRollouts,
                                                     tmp_path: Path) -> None:
    db = _store(run_cli, store_copy)
    stored = {r["rollout_id"]: r for r in read_rollouts(db)}
    result = run_cli(["export", "--db", str(db), "--format", "preference", "--out",
                      str(tmp_path / "pref"), "--json", "--allow-length-bias"])
    assert result.code == 0, result.err
    rows = _jsonl(tmp_path / "pref" / "train.jsonl")
    assert rows
    used: set[str] = set()
    for row in rows:
        chosen = stored[row["chosen_grade"]["rollout_id"]]
        rejected = stored[row["rejected_grade"]["rollout_id"]]
        assert chosen["passed"] and not rejected["passed"]
        assert {chosen["rollout_id"], rejected["rollout_id"]}.isdisjoint(used)
        used |= {chosen["rollout_id"], rejected["rollout_id"]}
        assert chosen["cell"] == rejected["cell"]
        assert json.loads(chosen["goal"])["tool"] == json.loads(rejected["goal"])["tool"]
        n = len(row["prompt"])
        assert row["prompt"][0]["role"] == "system"
        assert [m["role"] for m in row["prompt"]] == [
            m["role"] for m in json.loads(chosen["messages"])[:n]]
        assert len(row["chosen"]) == len(json.loads(chosen["messages"])) - n
        assert len(row["rejected"]) == len(json.loads(rejected["messages"])) - n
        assert row["margin"] == pytest.approx(chosen["reward"] - rejected["reward"])
        assert row["same_policy"] is (chosen["agent"] == rejected["agent"])
        assert isinstance(row["length_difference"], int)
        assert row["tools"]
        first = next(m for m in json.loads(chosen["messages"]) if m["role"] == "user")
        other = next(m for m in json.loads(rejected["messages"]) if m["role"] == "user")
        assert row["same_opening"] is (first["content"] == other["content"])
        if row["same_opening"]:
            assert row["prompt"][-1] == {"role": "user", "content": first["content"]}
    assert sum(row["same_opening"] for row in rows) >= len(rows) / 2
    # TRL's preference rows are the pairs that share the ask
    trl = run_cli(["export", "--db", str(db), "--format", "trl", "--out",
                   str(tmp_path / "trl"), "--allow-length-bias"])
    assert trl.code == 0, trl.err
    trl_rows = _jsonl(tmp_path / "trl" / "preference" / "train.jsonl")
    assert len(trl_rows) == sum(row["same_opening"] for row in rows)
    assert all(row["prompt"][-1]["role"] == "user" for row in trl_rows)


def test_length_bias_is_refused_unless_allowed(run_cli: RunCli, store_copy: StoreCopy,
                                               tmp_path: Path) -> None:
    db = _store(run_cli, store_copy)
    store = open_store(db, read_only=True)
    try:
        data = load_export_data(store.cursor())
    finally:
        store.close()
    pairs = make_pairs(data.train + data.held_out, seed=0)
    longer = [p for p in pairs if p.length_difference > 0]
    shorter = [p for p in pairs if p.length_difference <= 0]
    assert longer and shorter
    with pytest.raises(ExportError, match="--allow-length-bias"):
        length_bias(longer, ExportOptions())
    (warning,) = length_bias(longer, ExportOptions(allow_length_bias=True))
    assert "LENGTH BIAS" in warning
    assert length_bias(shorter, ExportOptions()) == ()


def test_rl_groups_lie_in_the_band(run_cli: RunCli, store_copy: StoreCopy,
                                   read_rollouts: ReadRollouts, tmp_path: Path) -> None:
    db = _store(run_cli, store_copy)
    stored = {r["rollout_id"]: r for r in read_rollouts(db)}
    card = _export(run_cli, db, tmp_path / "rl", "rl")
    groups = _jsonl(tmp_path / "rl" / "groups" / "train.jsonl")
    prompts = _jsonl(tmp_path / "rl" / "prompts" / "train.jsonl")
    assert groups
    for group in groups:
        members = [stored[r] for r in group["rollout_ids"]]
        assert group["k"] == len(members) == group["passed"] + group["failed"] >= 2
        assert group["passed"] == sum(1 for m in members if m["passed"])
        assert 0.2 <= group["passed"] / group["k"] <= 0.8
        rewards = [m["reward"] for m in members]
        assert group["mean"] == pytest.approx(sum(rewards) / len(rewards))
        mean = sum(rewards) / len(rewards)
        assert group["std"] == pytest.approx(
            (sum((x - mean) ** 2 for x in rewards) / len(rewards)) ** 0.5)
    grouped = {r for g in groups for r in g["rollout_ids"]}
    assert {p["rollout_id"] for p in prompts} == grouped
    for p in prompts:
        assert p["prompt"][-1]["role"] == "user" and p["tools"]
    counts = card["format_counts"]["train"]
    assert set(counts["gates"]) == {"junk", "do_nothing", "duplicate"}
    assert counts["groups"] == len(groups)


def test_card_counts_and_unfired_rollouts_left_out(run_cli: RunCli, store_copy: StoreCopy,
                                                   read_rollouts: ReadRollouts,
                                                   tmp_path: Path) -> None:
    db = _store(run_cli, store_copy)
    rows = read_rollouts(db)
    unfired = {r["rollout_id"] for r in rows if r["mutation_fired"] is False}
    assert unfired, "the offline run should leave some mutations unfired"
    card = _export(run_cli, db, tmp_path / "pq", "parquet")
    assert card["rollouts_in_store"] == len(rows)
    assert card["left_out"]["mutation_not_fired"] == len(unfired)
    exported = card["train"]["rollouts"] + card["held_out"]["rollouts"]
    assert exported + sum(card["left_out"].values()) == len(rows)
    import pyarrow.parquet as pq

    ids = set()
    for side in ("train", "held_out"):
        table = pq.read_table(tmp_path / "pq" / f"{side}.parquet")
        ids |= set(table.column("rollout_id").to_pylist())
        passed = table.column("passed").to_pylist()
        assert card[side]["passed"] == sum(passed)
        assert card[side]["rollouts"] == len(passed)
    assert ids.isdisjoint(unfired)
    store = open_store(db, read_only=True)
    try:
        (held, train), = store.query("SELECT count(*) FILTER (WHERE side = 'held_out'), "
                                     "count(*) FILTER (WHERE side = 'train') FROM splits")
    finally:
        store.close()
    assert (card["split"]["held_out_situations"], card["split"]["train_situations"]) == (
        held, train)
    assert card["split"]["seed"] == 0 and card["split"]["held_out_share"] == 0.3
    assert card["graded_by"] and all(k.startswith("conduct-checks") for k in card["graded_by"])
    assert (tmp_path / "pq" / "DATA_CARD.md").read_text().count("mutation_not_fired") == 1
    assert "semantic rule not run" in (tmp_path / "pq" / "DATA_CARD.md").read_text()


def _held_and_train(store: Any) -> tuple[tuple[Any, ...], str]:
    """The longest graded held-out rollout (id, goal, messages), and a passing-the-filters
    training rollout with no production source, to copy it into."""
    held = store.query(
        "SELECT r.rollout_id, CAST(r.goal AS VARCHAR), CAST(r.messages AS VARCHAR) "
        "FROM rollouts r JOIN rollout_situations s USING (rollout_id) "
        "JOIN splits p USING (situation_key) WHERE p.side = 'held_out' AND r.graded "
        "ORDER BY length(CAST(r.messages AS VARCHAR)) DESC, r.rollout_id LIMIT 1")[0]
    (train,) = store.query(
        "SELECT r.rollout_id FROM rollouts r JOIN rollout_situations s USING "
        "(rollout_id) JOIN splits p USING (situation_key) WHERE p.side = 'train' AND "
        "r.graded AND r.mutation_fired IS DISTINCT FROM false AND "
        "len(CAST(r.lineage->'source_conversations' AS VARCHAR[])) = 0 "
        "ORDER BY r.rollout_id LIMIT 1")[0]
    return held, train


def _plant(db: Path) -> dict[str, str]:
    """Copy held-out rollouts into training situations three ways; returns id -> rule."""
    store = open_store(db)
    try:
        held, train = _held_and_train(store)
        messages = json.loads(held[2])
        shouted = [dict(m, content="  " + m["content"].upper().replace(" ", "   \n"))
                   if m["role"] == "user" else m for m in messages]
        users = [i for i, m in enumerate(messages) if m["role"] == "user"]
        near = [dict(m) for m in messages]
        near[users[0]]["content"] += " Also, thanks."
        planted = {"plant-task": ("task_id", held[1], held[2]),
                   "plant-text": ("exact_text", '{"ask": "other", "tool": null, "facts": {}}',
                                  json.dumps(shouted)),
                   "plant-near": ("near_copy", '{"ask": "near", "tool": null, "facts": {}}',
                                  json.dumps(near))}
        for rid, (_, goal, text) in planted.items():
            store.query("INSERT INTO rollouts SELECT * REPLACE ($1 AS rollout_id, "
                        "CAST($2 AS JSON) AS goal, CAST($3 AS JSON) AS messages) FROM "
                        "rollouts WHERE rollout_id = $4", [rid, goal, text, train])
    finally:
        store.close()
    return {rid: rule for rid, (rule, _, _) in planted.items()}


def test_decontamination_counts_planted_copies_per_rule(run_cli: RunCli,
                                                        store_copy: StoreCopy,
                                                        tmp_path: Path) -> None:
    db = _store(run_cli, store_copy)
    before = _export(run_cli, db, tmp_path / "before", "sft")["decontamination"]
    planted = _plant(db)
    after = _export(run_cli, db, tmp_path / "after", "sft")["decontamination"]
    assert after["rules_run"] == ["task_id", "exact_text", "near_copy"]
    assert after["not_run"] == [SEMANTIC_NOT_RUN]
    for rule in ("task_id", "exact_text", "near_copy"):
        assert after["removed"][rule] == before["removed"][rule] + 1, rule
    assert after["checked"] == before["checked"] + 3
    store = open_store(db, read_only=True)
    try:
        data = load_export_data(store.cursor())
    finally:
        store.close()
    assert {rid: data.removed.get(rid) for rid in planted} == planted
    exported = {row["rollout_id"] for row in _jsonl(tmp_path / "after" / "train.jsonl")}
    assert exported.isdisjoint(planted)


def bag_of_words(texts: list[str]) -> list[list[float]]:
    """A real (if simple) embedder for ``--embedder``: hashed word counts, 256 dimensions.
    Word order does not matter to it, so a reordered copy lies at cosine 1."""
    import zlib

    vectors = []
    for text in texts:
        vector = [0.0] * 256
        for word in text.lower().split():
            vector[zlib.crc32(word.encode()) % 256] += 1.0
        vectors.append(vector)
    return vectors


def test_semantic_rule_runs_only_with_an_embedder(run_cli: RunCli, store_copy: StoreCopy,
                                                  tmp_path: Path) -> None:
    db = _store(run_cli, store_copy)
    embedder = ["--embedder", "python:tests.generator.test_exports:bag_of_words"]
    before = _export(run_cli, db, tmp_path / "b", "sft")["decontamination"]
    assert "semantic" not in before["removed"]
    with_embedder = run_cli(["export", "--db", str(db), "--format", "sft", "--out",
                             str(tmp_path / "e"), "--json", *embedder])
    assert with_embedder.code == 0, with_embedder.err
    assert "semantic rule not run" not in with_embedder.err
    baseline = with_embedder.json()["decontamination"]
    assert baseline["rules_run"] == ["task_id", "exact_text", "near_copy", "semantic"]
    assert baseline["not_run"] == []
    store = open_store(db)
    try:
        held, train = _held_and_train(store)
        messages = json.loads(held[2])
        # the same words in reverse order: no shared 8-gram, not the same text
        reordered = [dict(m, content=" ".join(reversed(m["content"].split())))
                     if m["role"] == "user" else m for m in messages]
        store.query("INSERT INTO rollouts SELECT * REPLACE ('plant-semantic' AS rollout_id, "
                    "CAST($1 AS JSON) AS goal, CAST($2 AS JSON) AS messages) FROM rollouts "
                    "WHERE rollout_id = $3",
                    ['{"ask": "semantic", "tool": null, "facts": {}}', json.dumps(reordered),
                     train])
    finally:
        store.close()
    without = _export(run_cli, db, tmp_path / "w", "sft")["decontamination"]
    assert without["removed"] == {k: before["removed"][k] for k in without["removed"]}
    after = run_cli(["export", "--db", str(db), "--format", "sft", "--out",
                     str(tmp_path / "a"), "--json", *embedder])
    assert after.code == 0, after.err
    counts = after.json()["decontamination"]["removed"]
    assert counts == dict(baseline["removed"], semantic=baseline["removed"]["semantic"] + 1)
    exported = {row["rollout_id"] for row in _jsonl(tmp_path / "a" / "train.jsonl")}
    assert "plant-semantic" not in exported


_REFUSALS: list[Any] = [
    pytest.param("empty", "sft", ["no rollouts", "tracemill generate"], id="no-rollouts"),
    pytest.param("unsplit", "sft", ["no stored split", "tracemill split"], id="no-split"),
    pytest.param("unsplit", "csv", ["unknown export format 'csv'", "sft", "parquet"],
                 id="unknown-format"),
]


@pytest.mark.parametrize(("which", "fmt", "needles"), _REFUSALS)
def test_refusals_are_one_line_exit_2(run_cli: RunCli, store_copy: StoreCopy,
                                      tmp_path: Path, which: str, fmt: str,
                                      needles: list[str]) -> None:
    if which == "empty":
        db = tmp_path / "empty.duckdb"
        open_store(db).close()
    else:
        db = store_copy("unsplit.duckdb")
        generated = run_cli(["generate", "--db", str(db), "--no-progress", "--json",
                             "--agent", "offline", "--budget", "10"])
        assert generated.code == 0, generated.err
    result = run_cli(["export", "--db", str(db), "--format", fmt, "--out",
                      str(tmp_path / "out")])
    assert result.code == 2 and result.out == ""
    (line,) = result.err.strip().splitlines()
    assert line.startswith("tracemill export: error: ")
    for needle in needles:
        assert needle in line


def test_datasets_reads_the_parquet_as_exported(run_cli: RunCli, store_copy: StoreCopy,
                                                tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    datasets = pytest.importorskip(
        "datasets", reason="Hugging Face datasets is not installed: "
                           "pip install -e '.[exports-test]'")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    db = _store(run_cli, store_copy)
    _export(run_cli, db, tmp_path / "pq", "parquet")
    store = open_store(db, read_only=True)
    try:
        data = load_export_data(store.cursor())
    finally:
        store.close()
    expected = {r.rollout_id: r for r in data.train}
    loaded = datasets.load_dataset("parquet", data_files={
        "train": str(tmp_path / "pq" / "train.parquet")}, split="train",
        cache_dir=str(tmp_path / "cache"))
    assert len(loaded) == len(expected) > 0
    assert os.environ["HF_DATASETS_OFFLINE"] == "1"
    with_calls = 0
    for row in loaded:
        want = expected[row["rollout_id"]]
        assert row["tools"] == data.tools_of(want)
        got = [{k: v for k, v in m.items() if v is not None} for m in row["messages"]]
        assert got == [{k: v for k, v in m.items() if v is not None} for m in want.messages]
        with_calls += sum(1 for m in got if m.get("tool_calls"))
    assert with_calls > 0


@pytest.mark.parametrize("command", ["split", "export", "eval"])
def test_every_option_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    from tracemill.cli import build_parser, main

    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"], environ={})
    assert exit_info.value.code == 0
    printed = " ".join(capsys.readouterr().out.split())
    sub = next(a for a in build_parser()._actions
               if isinstance(a, argparse._SubParsersAction))
    parser = sub.choices[command]
    assert parser.description and parser.description.split()[0] in printed
    for action in parser._actions:
        assert action.help and action.help != argparse.SUPPRESS, action.dest
        for option in action.option_strings:
            assert option in printed
    if command == "export":
        assert all(name in printed for name in ("sft", "trl", "preference", "rl", "parquet"))


def test_rollouts_after_the_split_are_left_out_loudly(run_cli: RunCli, store_copy: StoreCopy,
                                                      read_rollouts: ReadRollouts,
                                                      tmp_path: Path) -> None:
    db = _store(run_cli, store_copy)
    placed = set(_sides(db))
    more = run_cli(["generate", "--db", str(db), "--no-progress", "--json", "--agent",
                    "offline:0.3", "--budget", "30", "--seed", "11", "--fresh"])
    assert more.code == 0, more.err
    rows = read_rollouts(db)
    store = open_store(db, read_only=True)
    try:
        unplaced = {rid for (rid,) in store.query(
            "SELECT s.rollout_id FROM rollout_situations AS s LEFT JOIN splits AS p "
            "USING (situation_key) WHERE p.side IS NULL")}
    finally:
        store.close()
    assert unplaced and unplaced.isdisjoint(placed)
    counted = {r["rollout_id"] for r in rows if r["rollout_id"] in unplaced
               and r["mutation_fired"] is not False and r["graded"]}
    result = run_cli(["export", "--db", str(db), "--format", "sft", "--out",
                      str(tmp_path / "sft"), "--json"])
    assert result.code == 0, result.err
    card = result.json()
    assert card["left_out"]["unsplit"] == len(counted)
    assert "run `tracemill split` again" in result.err


# ------------------------------------------------------------- TRL, the real consumer


def _tokenizer(texts: list[str], template: str) -> Any:
    """A byte-level BPE tokenizer trained here on the export's own text (no download),
    with the chat template TRL ships for assistant-only training."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(texts, trainers.BpeTrainer(
        vocab_size=600, special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tokenizer = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=bpe, eos_token="<|im_end|>",
        pad_token="<|endoftext|>", bos_token=None)
    tokenizer.chat_template = template
    return tokenizer


def test_trl_reads_the_exports_with_a_shipped_chat_template(
        run_cli: RunCli, store_copy: StoreCopy, tmp_path: Path) -> None:
    pytest.importorskip("torch", reason="torch is not installed: pip install -e "
                                        "'.[exports-test]' (torch==2.13.0, the CPU build)")
    trl = pytest.importorskip("trl", reason="TRL is not installed: pip install -e "
                                            "'.[exports-test]'")
    from trl.data_utils import is_conversational, maybe_apply_chat_template

    db = _store(run_cli, store_copy)
    _export(run_cli, db, tmp_path / "trl", "trl", "--allow-length-bias")
    template = (Path(trl.__file__).parent / "chat_templates" /
                "qwen2_5_training.jinja").read_text()
    folders = {name: _jsonl(tmp_path / "trl" / name / "train.jsonl")
               for name in ("messages", "prompt_completion", "preference", "kto")}
    tools = json.loads((tmp_path / "trl" / "tools.json").read_text())
    texts = [json.dumps(row) for rows in folders.values() for row in rows]
    tokenizer = _tokenizer(texts, template)
    for name, rows in folders.items():
        for row in rows:
            assert is_conversational(row), name
            rendered = maybe_apply_chat_template(row, tokenizer, tools=row.get("tools", tools))
            assert rendered and all(isinstance(v, str | bool) for v in rendered.values())
    calls = 0
    for row in folders["messages"]:
        text = maybe_apply_chat_template(row, tokenizer, tools=row["tools"])["text"]
        for m in row["messages"]:
            for call in m.get("tool_calls") or ():
                calls += 1
                # arguments are an object: encoded once, never as an escaped string
                assert '"arguments": ' + json.dumps(call["function"]["arguments"]) in text
        encoded = tokenizer.apply_chat_template(
            row["messages"], tools=row["tools"], tokenize=True, return_dict=True,
            return_assistant_tokens_mask=True)
        ids, mask = encoded["input_ids"], encoded["assistant_masks"]
        trained = tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if m])
        untrained = tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if not m])
        # the mask covers exactly the agent's turns: every assistant text is inside it,
        # and no word of the person's or the world's is
        for m in row["messages"]:
            content = str(m.get("content") or "")
            if m["role"] == "assistant":
                assert content in trained
            elif content and m["role"] in ("user", "tool"):
                assert content not in trained and content in untrained
        assert trained.count("<|im_end|>") == sum(1 for m in row["messages"]
                                                  if m["role"] == "assistant")
    assert calls > 0


# TRL 1.16 still uses transformers' deprecated `gradient_checkpointing` names
@pytest.mark.filterwarnings("ignore:`\\w*gradient_checkpointing\\w*` is deprecated:FutureWarning")
def test_one_sft_and_one_dpo_step_on_the_exports(run_cli: RunCli, store_copy: StoreCopy,
                                                 tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch", reason="torch is not installed: pip install -e "
                                                "'.[exports-test]' (torch==2.13.0, CPU)")
    trl = pytest.importorskip("trl", reason="TRL is not installed: pip install -e "
                                            "'.[exports-test]'")
    datasets = pytest.importorskip("datasets", reason="datasets is not installed")
    from transformers import Qwen2Config, Qwen2ForCausalLM

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    db = _store(run_cli, store_copy)
    _export(run_cli, db, tmp_path / "trl", "trl", "--allow-length-bias")
    template = (Path(trl.__file__).parent / "chat_templates" /
                "qwen2_5_training.jinja").read_text()
    files = {name: str(tmp_path / "trl" / name / "train.jsonl")
             for name in ("messages", "preference")}
    texts = [line for path in files.values() for line in Path(path).read_text().splitlines()]
    tokenizer = _tokenizer(texts, template)
    torch.manual_seed(0)
    model_dir = tmp_path / "model"
    Qwen2ForCausalLM(Qwen2Config(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64,
        num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
        max_position_embeddings=8192, tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
    )).save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    common = {"max_steps": 1, "per_device_train_batch_size": 2, "report_to": "none",
              "save_strategy": "no", "use_cpu": True, "logging_steps": 1,
              "dataloader_num_workers": 0}

    sft_rows = datasets.load_dataset("json", data_files=files["messages"], split="train",
                                     cache_dir=str(tmp_path / "cache"))
    sft = trl.SFTTrainer(model=str(model_dir), processing_class=tokenizer,
                         train_dataset=sft_rows, args=trl.SFTConfig(
                             output_dir=str(tmp_path / "sft"), assistant_only_loss=True,
                             max_length=4096, **common))
    # the trainer's own mask: only assistant tokens carry a loss
    batch = sft.train_dataset[0]
    mask = batch["assistant_masks"] if "assistant_masks" in batch else [
        int(label != -100) for label in batch["labels"]]
    assert 0 < sum(mask) < len(batch["input_ids"]), sorted(batch)
    sft_loss = sft.train().training_loss
    assert sft_loss == sft_loss and sft_loss > 0  # a number, not NaN

    pref_rows = datasets.load_dataset("json", data_files=files["preference"], split="train",
                                      cache_dir=str(tmp_path / "cache"))
    assert len(pref_rows) >= 2
    dpo = trl.DPOTrainer(model=str(model_dir),
                         ref_model=Qwen2ForCausalLM.from_pretrained(model_dir),
                         processing_class=tokenizer, train_dataset=pref_rows,
                         args=trl.DPOConfig(output_dir=str(tmp_path / "dpo"),
                                            max_length=4096, **common))
    dpo_loss = dpo.train().training_loss
    assert dpo_loss == dpo_loss and dpo_loss > 0


def test_redacted_keys_never_reach_an_export(run_cli: RunCli, store_copy: StoreCopy,
                                             tmp_path: Path) -> None:
    """The ``redact`` setting: values under a redacted key (here the identifier argument the
    tools take) are masked in every row, and so are their echoes in results and replies;
    the data card names the patterns."""
    db = _store(run_cli, store_copy, "redact.duckdb")
    store = open_store(db, read_only=True)
    try:
        plain = export(store.cursor(), "sft", tmp_path / "plain", ExportOptions())
        rows = [row for side in ("train", "held_out")
                for row in _jsonl(tmp_path / "plain" / f"{side}.jsonl")]
        arguments = [json_arguments(call) for row in rows for m in row["messages"]
                     for call in m.get("tool_calls") or ()]
        keys = Counter(k for a in arguments for k, v in a.items()
                       if isinstance(v, str) and len(v) >= 4)
        key = keys.most_common(1)[0][0]
        secrets = {a[key] for a in arguments if isinstance(a.get(key), str)
                   and len(a[key]) >= 4}
        card = export(store.cursor(), "sft", tmp_path / "masked",
                      ExportOptions(redact=(key.upper(),)))
        # the verifiers package carries the plan items (the person's facts, the ask) too
        export(store.cursor(), "verifiers", tmp_path / "vf", ExportOptions(redact=(key,)))
    finally:
        store.close()
    tasks = "".join(path.read_text() for path in (tmp_path / "vf").rglob("data/*.jsonl"))
    assert tasks and not any(secret in tasks for secret in secrets)
    assert plain["redacted_keys"] == [] and card["redacted_keys"] == [key.lower()]
    text = "".join((tmp_path / "masked" / f"{side}.jsonl").read_text()
                   for side in ("train", "held_out"))
    assert secrets and not any(secret in text for secret in secrets)
    assert '"[redacted]"' in text
    # the shape stays valid: arguments are still objects carrying the key
    masked = [json_arguments(call) for line in text.splitlines()
              for m in json.loads(line)["messages"] for call in m.get("tool_calls") or ()]
    assert any(a.get(key) == "[redacted]" for a in masked)


def json_arguments(call: dict[str, Any]) -> dict[str, Any]:
    arguments = call["function"]["arguments"]
    return arguments if isinstance(arguments, dict) else json.loads(arguments)
