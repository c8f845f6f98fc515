"""model.safetensors.index.json entries that name a shard without that tensor: the build goes on
(each tensor is read from the shard that holds it) with one warning line per stale entry."""

import json

import harness as H


def test_stale_index_entries_are_warned_about(tmp_path):
    hf = tmp_path / "hf"
    H.write_checkpoint("llama", {"_max_shard_size": "40KB"}, hf)
    index_path = hf / "model.safetensors.index.json"
    index = json.loads(index_path.read_text())
    shards = sorted(set(index["weight_map"].values()))
    moved = "model.norm.weight"  # listed under a shard that does not hold it
    wrong = next(s for s in shards if s != index["weight_map"][moved])
    index["weight_map"][moved] = wrong
    index["weight_map"]["model.layers.9.mlp.up_proj.weight"] = shards[0]  # in no shard at all
    index_path.write_text(json.dumps(index))

    r = H.run_mobius("build", "--config", hf, tmp_path / "onnx", "--runtime", "none")  # no tokenizer warning
    assert r.returncode == 0, r.stderr
    warnings = [line for line in r.stderr.splitlines() if line.startswith("mobius: warning:")]
    assert len(warnings) == 2, r.stderr
    for name, shard in ((moved, wrong), ("model.layers.9.mlp.up_proj.weight", shards[0])):
        assert any(f"weight_map['{name}']" in w and shard in w for w in warnings), (name, shard, warnings)
