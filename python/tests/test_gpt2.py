# SPDX-License-Identifier: Apache-2.0
"""tprod.GPT2 against a GPT-2 written here in plain PyTorch from the architecture's definition (Radford et al.
2019; Hugging Face's GPT2LMHeadModel): random weights saved in the published layout (GPT2Model's names, Conv1D
weights in x out, wte tied to the head) by a safetensors writer written here, in F32, BF16 and sharded, and the
logits of tprod's layers equal to the reference's in double."""
import json
import math

import numpy as np
import pytest

import tprod

torch = pytest.importorskip("torch")
F = torch.nn.functional
from published_files import assert_close, read_safetensors, rounded, safetensors_bytes, write_folder  # noqa: E402

if not hasattr(tprod, "GPT2"):
    pytest.skip("this tprod was built without tprod::io (nlohmann-json)", allow_module_level=True)

CONFIG = {"model_type": "gpt2", "vocab_size": 37, "n_positions": 12, "n_embd": 16, "n_layer": 2, "n_head": 4,
          "n_inner": None, "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5}


def random_weights(config, seed=0):
    """GPT2Model's state dict with random values of a trained model's scale (LayerNorm scales near 1)."""
    g = torch.Generator().manual_seed(seed)
    d, v, n = config["n_embd"], config["vocab_size"], config["n_positions"]
    inner = config["n_inner"] or 4 * d

    def r(*shape, scale=0.3, mean=0.0):
        return mean + scale * torch.randn(*shape, generator=g, dtype=torch.float64)

    w = {"wte.weight": r(v, d), "wpe.weight": r(n, d), "ln_f.weight": r(d, mean=1.0), "ln_f.bias": r(d)}
    for i in range(config["n_layer"]):
        h = f"h.{i}."
        w |= {h + "ln_1.weight": r(d, mean=1.0), h + "ln_1.bias": r(d),
              h + "attn.c_attn.weight": r(d, 3 * d), h + "attn.c_attn.bias": r(3 * d),
              h + "attn.c_proj.weight": r(d, d), h + "attn.c_proj.bias": r(d),
              h + "ln_2.weight": r(d, mean=1.0), h + "ln_2.bias": r(d),
              h + "mlp.c_fc.weight": r(d, inner), h + "mlp.c_fc.bias": r(inner),
              h + "mlp.c_proj.weight": r(inner, d), h + "mlp.c_proj.bias": r(d)}
    return w


def reference_logits(w, config, ids, prefix="", head=None):
    """GPT-2's forward pass from its definition, in double: pre-norm blocks, causal softmax(QK^T/sqrt(d_h))V,
    Conv1D layers x @ W + b, the head x @ wte^T."""
    d, heads = config["n_embd"], config["n_head"]
    dh = d // heads
    eps = config["layer_norm_epsilon"]
    act = {"gelu_new": lambda x: F.gelu(x, approximate="tanh"), "gelu": F.gelu, "relu": F.relu}[
        config["activation_function"]]
    W = lambda name: w[prefix + name]  # noqa: E731
    ids = torch.as_tensor(ids)
    B, T = ids.shape
    x = W("wte.weight")[ids] + W("wpe.weight")[:T]
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    for i in range(config["n_layer"]):
        h = f"h.{i}."
        a = F.layer_norm(x, (d,), W(h + "ln_1.weight"), W(h + "ln_1.bias"), eps)
        q, k, v = (a @ W(h + "attn.c_attn.weight") + W(h + "attn.c_attn.bias")).split(d, dim=-1)
        q, k, v = (t.view(B, T, heads, dh).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(dh)
        y = scores.masked_fill(~causal, float("-inf")).softmax(-1) @ v
        y = y.transpose(1, 2).reshape(B, T, d)
        x = x + y @ W(h + "attn.c_proj.weight") + W(h + "attn.c_proj.bias")
        m = F.layer_norm(x, (d,), W(h + "ln_2.weight"), W(h + "ln_2.bias"), eps)
        x = x + act(m @ W(h + "mlp.c_fc.weight") + W(h + "mlp.c_fc.bias")) @ W(h + "mlp.c_proj.weight") \
            + W(h + "mlp.c_proj.bias")
    x = F.layer_norm(x, (d,), W("ln_f.weight"), W("ln_f.bias"), eps)
    return (x @ (W("wte.weight") if head is None else head).T).numpy()


IDS = np.array([[3, 14, 15, 9, 26, 5, 35, 8, 9, 7], [0, 36, 1, 2, 2, 2, 30, 11, 4, 19]])


@pytest.mark.parametrize("dtype", ["F32", "BF16", "F16"])
def test_logits_equal_pytorch_in_double(tmp_path, dtype):
    w = random_weights(CONFIG)
    folder = write_folder(tmp_path / dtype, w, CONFIG, dtype)
    model = tprod.GPT2.load(folder)
    reference = reference_logits(rounded(w, dtype), CONFIG, IDS)
    assert_close(model.logits(IDS), reference)
    # one sequence, (T,) in and (T, V) out; a causal prefix gives the same logits as the longer sequence
    assert_close(model.logits(IDS[1]), reference[1])
    assert_close(model.logits(IDS[1, :4]), reference[1, :4])
    assert model.config["n_embd"] == 16 and model.config["tie_word_embeddings"] is True


def test_float32_model_within_its_rounding(tmp_path):
    w = random_weights(CONFIG, seed=1)
    model = tprod.GPT2.load(write_folder(tmp_path, w, CONFIG), dtype=np.float32)
    z = model.logits(IDS)
    assert z.dtype == np.float32
    reference = reference_logits(rounded(w, "F32"), CONFIG, IDS)
    # float32 arithmetic through 2 layers of width 16: a few hundred roundings per value
    assert_close(z.astype(np.float64), reference, bits=2e-4)


@pytest.mark.parametrize("activation", ["gelu", "relu"])
def test_other_activations_and_epsilon(tmp_path, activation):
    config = CONFIG | {"activation_function": activation, "layer_norm_epsilon": 1e-3, "n_inner": 24}
    w = random_weights(config, seed=2)
    model = tprod.GPT2.load(write_folder(tmp_path, w, config))
    assert_close(model.logits(IDS), reference_logits(rounded(w, "F32"), config, IDS))


def test_lm_head_model_names_untied_head_and_buffers(tmp_path):
    """GPT2LMHeadModel's file: "transformer." names, an lm_head.weight of its own, the causal-mask buffers."""
    w = random_weights(CONFIG, seed=3)
    stored = {"transformer." + k: v for k, v in w.items()}
    head = 0.3 * torch.randn(CONFIG["vocab_size"], CONFIG["n_embd"], dtype=torch.float64)
    stored["lm_head.weight"] = head
    n = CONFIG["n_positions"]
    for i in range(CONFIG["n_layer"]):
        stored[f"transformer.h.{i}.attn.bias"] = torch.ones(n, n).tril().view(1, 1, n, n)
        stored[f"transformer.h.{i}.attn.masked_bias"] = torch.tensor(-1e4)
    model = tprod.GPT2.load(write_folder(tmp_path, stored, CONFIG))
    expected = reference_logits(rounded(stored, "F32"), CONFIG, IDS, prefix="transformer.",
                                head=rounded({"h": head}, "F32")["h"])
    assert_close(model.logits(IDS), expected)
    assert model.config["tie_word_embeddings"] is False


def test_sharded_checkpoint(tmp_path):
    w = random_weights(CONFIG, seed=4)
    names = sorted(w)
    shards = {"model-00001-of-00002.safetensors": names[: len(names) // 2],
              "model-00002-of-00002.safetensors": names[len(names) // 2:]}
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    for file, part in shards.items():
        (tmp_path / file).write_bytes(safetensors_bytes({k: w[k] for k in part}, "F32"))
    index = {"metadata": {"total_size": 0}, "weight_map": {k: f for f, part in shards.items() for k in part}}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
    model = tprod.GPT2.load(tmp_path)
    assert_close(model.logits(IDS), reference_logits(rounded(w, "F32"), CONFIG, IDS))


@pytest.mark.parametrize("dtype", [None, "F32", "BF16"])
def test_save_writes_the_published_layout(tmp_path, dtype):
    w = random_weights(CONFIG, seed=5)
    model = tprod.GPT2.load(write_folder(tmp_path / "in", w, CONFIG))
    model.save(tmp_path / "out", dtype=dtype)
    written = read_safetensors(tmp_path / "out" / "model.safetensors")
    assert set(written) == set(w)  # GPT2Model's names; the tied head is not written twice
    stored = dtype or "F64"
    for name, t in w.items():
        got_dtype, shape, values = written[name]
        assert (got_dtype, shape) == (stored, tuple(t.shape)), name
        expected = rounded(rounded({name: t}, "F32"), stored)[name]
        assert torch.equal(values, expected), name
    config = json.loads((tmp_path / "out" / "config.json").read_text())
    assert config["model_type"] == "gpt2" and config["n_layer"] == 2 and config["tie_word_embeddings"] is True
    again = tprod.GPT2.load(tmp_path / "out")
    reference = reference_logits({k: v[2] for k, v in written.items()}, CONFIG, IDS)
    assert_close(again.logits(IDS), reference)


def test_untied_head_is_saved_as_lm_head(tmp_path):
    w = random_weights(CONFIG, seed=6)
    stored = dict(w, **{"lm_head.weight": 0.3 * torch.randn(CONFIG["vocab_size"], CONFIG["n_embd"],
                                                            dtype=torch.float64)})
    tprod.GPT2.load(write_folder(tmp_path / "in", stored, CONFIG)).save(tmp_path / "out")
    written = read_safetensors(tmp_path / "out" / "model.safetensors")
    assert "lm_head.weight" in written
    assert json.loads((tmp_path / "out" / "config.json").read_text())["tie_word_embeddings"] is False


def test_bad_checkpoints_are_refused_by_name(tmp_path):
    w = random_weights(CONFIG, seed=7)
    missing = dict(w)
    del missing["h.1.mlp.c_fc.bias"]
    with pytest.raises(OSError, match="h.1.mlp.c_fc.bias"):
        tprod.GPT2.load(write_folder(tmp_path / "missing", missing, CONFIG))
    extra = dict(w, **{"h.0.attn.q_proj.weight": torch.zeros(16, 16)})
    with pytest.raises(OSError, match="h.0.attn.q_proj.weight"):
        tprod.GPT2.load(write_folder(tmp_path / "extra", extra, CONFIG))
    wrong = dict(w, **{"h.0.attn.c_attn.weight": torch.zeros(48, 16)})  # nn.Linear's out x in, not Conv1D's
    with pytest.raises(ValueError, match="h.0.attn.c_attn.weight"):
        tprod.GPT2.load(write_folder(tmp_path / "shape", wrong, CONFIG))
    for change, field in [({"model_type": "bert"}, "model_type"), ({"activation_function": "swish"}, "swish"),
                          ({"scale_attn_by_inverse_layer_idx": True}, "scale_attn_by_inverse_layer_idx"),
                          ({"n_head": 5}, "n_head|h = 5|heads"), ({"n_embd": "16"}, "n_embd")]:
        folder = write_folder(tmp_path / field.split("|")[0], w, CONFIG | change)
        with pytest.raises((OSError, ValueError), match=field):
            tprod.GPT2.load(folder)
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "config.json").write_text(json.dumps(CONFIG))
    with pytest.raises(OSError, match="model.safetensors"):
        tprod.GPT2.load(tmp_path / "empty")
    with pytest.raises(OSError, match="config.json"):
        tprod.GPT2.load(tmp_path / "nowhere")


def test_bad_tokens_are_refused(tmp_path):
    model = tprod.GPT2.load(write_folder(tmp_path, random_weights(CONFIG), CONFIG))
    with pytest.raises(ValueError, match="token 37"):
        model.logits(np.array([1, 37]))
    with pytest.raises(ValueError, match="token -1"):
        model.logits(np.array([-1]))
    with pytest.raises(ValueError, match="13 tokens.*12 positions"):
        model.logits(np.zeros(13, dtype=np.int64))
    with pytest.raises(TypeError, match="integer"):
        model.logits(np.zeros(3))
    with pytest.raises(ValueError, match="no sequence"):
        model.logits(np.zeros((2, 0), dtype=np.int64))
    with pytest.raises(ValueError, match=r"\(T,\) or \(B, T\)"):
        model.logits(np.zeros((1, 2, 3), dtype=np.int64))
    with pytest.raises(TypeError, match="float32 or float64"):
        tprod.GPT2.load(tmp_path, dtype=np.float16)
    # torch tensors go in too
    assert model.logits(torch.tensor([1, 2, 3])).shape == (3, 37)


def test_paper_004_on_the_checkpoint_in_place(tmp_path):
    """compress_attention puts tprod.multihead_tucker's reconstruction of the layer's own W_Q, W_K, W_V, W_O (read
    from the file) back in c_attn and c_proj of that layer only; laser_mlp replaces c_fc by its rank-k truncated SVD
    (NumPy's, computed here); the logits are those of the reference GPT-2 on the written weights."""
    w = rounded(random_weights(CONFIG, seed=8), "F32")
    model = tprod.GPT2.load(write_folder(tmp_path / "in", w, CONFIG))
    d, heads = CONFIG["n_embd"], CONFIG["n_head"]
    assert model.parameter_count() == sum(t.numel() for t in w.values())
    [tucker] = model.compress_attention((8, 3, 2), layers=[1])
    stored = heads * 8 * 3 * 2 + d * 8 + (d // heads) * 3 + 4 * 2  # h cores and the three shared factors
    assert tucker["layer"] == 1 and tucker["ranks"] == [8, 3, 2]
    assert tucker["compression_ratio"] == pytest.approx(4 * d * d / stored, rel=1e-12)
    [laser] = model.laser_mlp(3, layers=[0], output=False)
    assert laser["layer"] == 0 and laser["rank"] == 3 and laser["relative_error"]["output"] == 0
    model.save(tmp_path / "out")
    out = {k: v[2] for k, v in read_safetensors(tmp_path / "out" / "model.safetensors").items()}

    W = w["h.1.attn.c_attn.weight"].numpy()
    expected = tprod.multihead_tucker(W[:, :d], W[:, d:2 * d], W[:, 2 * d:], w["h.1.attn.c_proj.weight"].numpy(),
                                      heads, (8, 3, 2))
    got = out["h.1.attn.c_attn.weight"].numpy()
    np.testing.assert_allclose(got, np.hstack([expected.query, expected.key, expected.value]), rtol=0, atol=1e-13)
    np.testing.assert_allclose(out["h.1.attn.c_proj.weight"].numpy(), expected.output, rtol=0, atol=1e-13)
    error = np.linalg.norm(got[:, :d] - W[:, :d]) / np.linalg.norm(W[:, :d])
    assert tucker["relative_error"]["query"] == pytest.approx(error, rel=1e-10)

    fc = w["h.0.mlp.c_fc.weight"].numpy()
    u, s, vt = np.linalg.svd(fc, full_matrices=False)
    np.testing.assert_allclose(out["h.0.mlp.c_fc.weight"].numpy(), (u[:, :3] * s[:3]) @ vt[:3], rtol=0, atol=1e-12)
    for unchanged in ["h.0.attn.c_attn.weight", "h.0.mlp.c_proj.weight", "h.1.mlp.c_fc.weight", "wte.weight"]:
        assert torch.equal(out[unchanged], w[unchanged]), unchanged
    assert_close(model.logits(IDS), reference_logits(out, CONFIG, IDS))
    assert [r["layer"] for r in model.laser_attention(4)] == [0, 1]
    with pytest.raises(ValueError, match="rank|R"):
        model.compress_attention((17, 3, 2))
    with pytest.raises(ValueError, match="layer"):
        model.laser_mlp(2, layers=[2])
