# SPDX-License-Identifier: Apache-2.0
"""tprod.BertForSequenceClassification and tprod.BertForMaskedLM against a BERT written here in plain PyTorch from
the architecture's definition (Devlin et al. 2019; Hugging Face's BertModel, its pooler and heads): random weights
saved in the published layout (nn.Linear's out x in, separate query/key/value, "bert." names) by the safetensors
writer of published_files.py, in F32, BF16 and sharded, and tprod's logits equal to the reference's in double."""
import json
import math

import numpy as np
import pytest

import tprod

torch = pytest.importorskip("torch")
F = torch.nn.functional
from published_files import assert_close, read_safetensors, rounded, safetensors_bytes, write_folder  # noqa: E402

if not hasattr(tprod, "BertForSequenceClassification"):
    pytest.skip("this tprod was built without tprod::io (nlohmann-json)", allow_module_level=True)

CONFIG = {"model_type": "bert", "vocab_size": 41, "max_position_embeddings": 12, "type_vocab_size": 2,
          "hidden_size": 16, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 24,
          "hidden_act": "gelu", "layer_norm_eps": 1e-12, "num_labels": 3}


def random_weights(config, seed=0, heads=("classifier",)):
    """BertForSequenceClassification's and/or BertForMaskedLM's state dict ("bert." names) with random values of a
    trained model's scale (LayerNorm scales near 1)."""
    g = torch.Generator().manual_seed(seed)
    d, v = config["hidden_size"], config["vocab_size"]
    inner, labels = config["intermediate_size"], config.get("num_labels", 2)

    def r(*shape, scale=0.3, mean=0.0):
        return mean + scale * torch.randn(*shape, generator=g, dtype=torch.float64)

    e = "bert.embeddings."
    w = {e + "word_embeddings.weight": r(v, d), e + "position_embeddings.weight": r(config["max_position_embeddings"], d),
         e + "token_type_embeddings.weight": r(config["type_vocab_size"], d),
         e + "LayerNorm.weight": r(d, mean=1.0), e + "LayerNorm.bias": r(d)}
    for i in range(config["num_hidden_layers"]):
        h = f"bert.encoder.layer.{i}."
        for name in ("query", "key", "value"):
            w |= {h + f"attention.self.{name}.weight": r(d, d), h + f"attention.self.{name}.bias": r(d)}
        w |= {h + "attention.output.dense.weight": r(d, d), h + "attention.output.dense.bias": r(d),
              h + "attention.output.LayerNorm.weight": r(d, mean=1.0), h + "attention.output.LayerNorm.bias": r(d),
              h + "intermediate.dense.weight": r(inner, d), h + "intermediate.dense.bias": r(inner),
              h + "output.dense.weight": r(d, inner), h + "output.dense.bias": r(d),
              h + "output.LayerNorm.weight": r(d, mean=1.0), h + "output.LayerNorm.bias": r(d)}
    if "classifier" in heads:
        w |= {"bert.pooler.dense.weight": r(d, d), "bert.pooler.dense.bias": r(d),
              "classifier.weight": r(labels, d), "classifier.bias": r(labels)}
    if "masked_lm" in heads:
        p = "cls.predictions."
        w |= {p + "transform.dense.weight": r(d, d), p + "transform.dense.bias": r(d),
              p + "transform.LayerNorm.weight": r(d, mean=1.0), p + "transform.LayerNorm.bias": r(d),
              p + "bias": r(v)}
    return w


ACTIVATIONS = {"gelu": F.gelu, "gelu_new": lambda x: F.gelu(x, approximate="tanh"), "relu": F.relu}


def encoder(w, config, ids, segments=None, mask=None):
    """BertModel's last hidden states, from its definition, in double: embeddings summed and normalized,
    post-norm layers x = LN(x + attn(x)), x = LN(x + W2 act(W1 x)), attention with the padding keys masked."""
    d, heads = config["hidden_size"], config["num_attention_heads"]
    dh, eps, act = d // heads, config["layer_norm_eps"], ACTIVATIONS[config["hidden_act"]]
    ids = torch.as_tensor(ids)
    B, T = ids.shape
    segments = torch.zeros_like(ids) if segments is None else torch.as_tensor(segments)
    mask = torch.ones(B, T, dtype=torch.bool) if mask is None else torch.as_tensor(mask).bool()
    e = "bert.embeddings."
    x = w[e + "word_embeddings.weight"][ids] + w[e + "position_embeddings.weight"][:T] + \
        w[e + "token_type_embeddings.weight"][segments]
    x = F.layer_norm(x, (d,), w[e + "LayerNorm.weight"], w[e + "LayerNorm.bias"], eps)
    for i in range(config["num_hidden_layers"]):
        h = f"bert.encoder.layer.{i}."
        linear = lambda x, name: F.linear(x, w[h + name + ".weight"], w[h + name + ".bias"])  # noqa: E731
        q, k, v = (linear(x, f"attention.self.{n}").view(B, T, heads, dh).transpose(1, 2)
                   for n in ("query", "key", "value"))
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(dh)
        y = (scores.masked_fill(~mask[:, None, None, :], float("-inf")).softmax(-1) @ v).transpose(1, 2)
        a = linear(y.reshape(B, T, d), "attention.output.dense")
        x = F.layer_norm(x + a, (d,), w[h + "attention.output.LayerNorm.weight"],
                         w[h + "attention.output.LayerNorm.bias"], eps)
        f = linear(act(linear(x, "intermediate.dense")), "output.dense")
        x = F.layer_norm(x + f, (d,), w[h + "output.LayerNorm.weight"], w[h + "output.LayerNorm.bias"], eps)
    return x


def classifier_logits(w, config, ids, segments=None, mask=None):
    """classifier(tanh(pooler(x[:, 0]))): BertForSequenceClassification in evaluation."""
    x = encoder(w, config, ids, segments, mask)
    pooled = torch.tanh(F.linear(x[:, 0], w["bert.pooler.dense.weight"], w["bert.pooler.dense.bias"]))
    return F.linear(pooled, w["classifier.weight"], w["classifier.bias"]).numpy()


def masked_lm_logits(w, config, ids, segments=None, mask=None, decoder=None):
    """LN(act(dense(x))) @ E^T + b: BertForMaskedLM's head, the decoder tied to the word embeddings."""
    d, eps, act = config["hidden_size"], config["layer_norm_eps"], ACTIVATIONS[config["hidden_act"]]
    p = "cls.predictions."
    x = encoder(w, config, ids, segments, mask)
    t = act(F.linear(x, w[p + "transform.dense.weight"], w[p + "transform.dense.bias"]))
    t = F.layer_norm(t, (d,), w[p + "transform.LayerNorm.weight"], w[p + "transform.LayerNorm.bias"], eps)
    e = w["bert.embeddings.word_embeddings.weight"] if decoder is None else decoder
    return (t @ e.T + w[p + "bias"]).numpy()


IDS = np.array([[2, 14, 15, 9, 26, 5, 35, 8, 3, 7], [2, 36, 1, 40, 2, 3, 30, 11, 4, 19]])
SEGMENTS = np.array([[0, 0, 0, 0, 0, 1, 1, 1, 1, 1], [0, 0, 0, 0, 1, 1, 1, 0, 0, 0]])
MASK = np.array([[1] * 10, [1] * 7 + [0] * 3])


@pytest.mark.parametrize("dtype", ["F32", "BF16"])
def test_classifier_logits_equal_pytorch_in_double(tmp_path, dtype):
    w = random_weights(CONFIG)
    model = tprod.BertForSequenceClassification.load(write_folder(tmp_path, w, CONFIG, dtype))
    assert model.fresh() == []
    ref = rounded(w, dtype)
    assert_close(model.logits(IDS), classifier_logits(ref, CONFIG, IDS))
    assert_close(model.logits(IDS, SEGMENTS, MASK), classifier_logits(ref, CONFIG, IDS, SEGMENTS, MASK))
    # one sequence: (T,) in, (num_labels,) out; the padding of the second sequence changes nothing
    assert_close(model.logits(IDS[1, :7], SEGMENTS[1, :7]), classifier_logits(ref, CONFIG, IDS[1:, :7],
                                                                           SEGMENTS[1:, :7])[0])
    padded = IDS.copy()
    padded[1, 7:] = 0
    assert_close(model.logits(padded, SEGMENTS, MASK), model.logits(IDS, SEGMENTS, MASK), bits=1e-15)
    assert len(model.config["id2label"]) == 3


@pytest.mark.parametrize("activation", ["gelu_new", "relu"])
def test_masked_lm_logits_equal_pytorch_in_double(tmp_path, activation):
    config = CONFIG | {"hidden_act": activation, "layer_norm_eps": 1e-5}
    w = random_weights(config, seed=1, heads=("masked_lm",))
    model = tprod.BertForMaskedLM.load(write_folder(tmp_path, w, config))
    z = model.logits(IDS, SEGMENTS, MASK)
    assert z.shape == (2, 10, 41)
    assert_close(z, masked_lm_logits(rounded(w, "F32"), config, IDS, SEGMENTS, MASK))
    assert model.config["tie_word_embeddings"] is True
    # BertForPreTraining's file: the next-sentence head and the position_ids buffer are skipped; an untied decoder
    # of the file's own is used
    decoder = 0.3 * torch.randn(41, 16, dtype=torch.float64)
    pretraining = dict(w, **{"cls.seq_relationship.weight": torch.zeros(2, 16), "cls.seq_relationship.bias":
                             torch.zeros(2), "bert.embeddings.position_ids": torch.arange(12.0)[None],
                             "cls.predictions.decoder.weight": decoder})
    model = tprod.BertForMaskedLM.load(write_folder(tmp_path / "pre", pretraining, config))
    assert_close(model.logits(IDS), masked_lm_logits(rounded(w, "F32"), config, IDS,
                                                     decoder=rounded({"d": decoder}, "F32")["d"]))


def test_bert_model_names_gamma_beta_and_shards(tmp_path):
    """BertModel's file (no "bert." prefix, no classifier) with the older LayerNorm.gamma/beta, in two shards: the
    encoder and pooler are read, the classifier is drawn from the seed and listed as fresh."""
    w = random_weights(CONFIG, seed=2)
    stored = {k.removeprefix("bert.").replace("LayerNorm.weight", "LayerNorm.gamma")
              .replace("LayerNorm.bias", "LayerNorm.beta"): v for k, v in w.items() if not k.startswith("classifier")}
    names = sorted(stored)
    shards = {"model-00001-of-00002.safetensors": names[:20], "model-00002-of-00002.safetensors": names[20:]}
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    for file, part in shards.items():
        (tmp_path / file).write_bytes(safetensors_bytes({k: stored[k] for k in part}, "F32"))
    (tmp_path / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {}, "weight_map": {k: f for f, part in shards.items() for k in part}}))
    model = tprod.BertForSequenceClassification.load(tmp_path, seed=5)
    assert model.fresh() == ["classifier.weight", "classifier.bias"]
    # the classifier's weights as tprod drew them, read back from its own save
    model.save(tmp_path / "out")
    written = {k: v[2] for k, v in read_safetensors(tmp_path / "out" / "model.safetensors").items()}
    ref = rounded(w, "F32") | {k: written[k] for k in ("classifier.weight", "classifier.bias")}
    assert_close(model.logits(IDS, SEGMENTS, MASK), classifier_logits(ref, CONFIG, IDS, SEGMENTS, MASK))


@pytest.mark.parametrize("dtype", [None, "BF16"])
def test_save_writes_the_published_layout(tmp_path, dtype):
    w = random_weights(CONFIG, seed=3, heads=("masked_lm",))
    model = tprod.BertForMaskedLM.load(write_folder(tmp_path / "in", w, CONFIG))
    model.save(tmp_path / "out", dtype=dtype)
    written = read_safetensors(tmp_path / "out" / "model.safetensors")
    assert set(written) == set(w)  # BertForMaskedLM's names; the tied decoder not written
    stored = dtype or "F64"
    for name, t in w.items():
        got_dtype, shape, values = written[name]
        assert (got_dtype, shape) == (stored, tuple(t.shape)), name
        assert torch.equal(values, rounded(rounded({name: t}, "F32"), stored)[name]), name
    config = json.loads((tmp_path / "out" / "config.json").read_text())
    assert config["model_type"] == "bert" and config["architectures"] == ["BertForMaskedLM"]
    assert config["hidden_act"] == "gelu" and config["num_hidden_layers"] == 2
    again = tprod.BertForMaskedLM.load(tmp_path / "out")
    assert_close(again.logits(IDS), masked_lm_logits({k: v[2] for k, v in written.items()}, CONFIG, IDS))


def test_bad_checkpoints_and_inputs_are_refused_by_name(tmp_path):
    w = random_weights(CONFIG, seed=4)
    missing = dict(w)
    del missing["bert.encoder.layer.1.attention.self.value.bias"]
    with pytest.raises(OSError, match="bert.encoder.layer.1.attention.self.value.bias"):
        tprod.BertForSequenceClassification.load(write_folder(tmp_path / "missing", missing, CONFIG))
    extra = dict(w, **{"bert.encoder.layer.0.attention.self.rotary": torch.zeros(4)})
    with pytest.raises(OSError, match="rotary"):
        tprod.BertForSequenceClassification.load(write_folder(tmp_path / "extra", extra, CONFIG))
    wrong = dict(w, **{"bert.encoder.layer.0.intermediate.dense.weight": torch.zeros(16, 24)})  # in x out
    with pytest.raises(ValueError, match="intermediate.dense.weight"):
        tprod.BertForSequenceClassification.load(write_folder(tmp_path / "shape", wrong, CONFIG))
    for change, field in [({"model_type": "roberta"}, "model_type"), ({"hidden_act": "swish"}, "swish"),
                          ({"position_embedding_type": "relative_key"}, "relative_key"),
                          ({"num_labels": 2}, "classifier.weight"), ({"num_labels": 1}, "regression")]:
        with pytest.raises((OSError, ValueError), match=field):
            tprod.BertForSequenceClassification.load(write_folder(tmp_path / field, w, CONFIG | change))

    model = tprod.BertForSequenceClassification.load(write_folder(tmp_path / "ok", w, CONFIG))
    with pytest.raises(ValueError, match="token type 2 at position 3"):
        model.logits(IDS[0], np.array([0, 0, 0, 2, 0, 0, 0, 0, 0, 0]))
    with pytest.raises(ValueError, match="token_type_ids of shape"):
        model.logits(IDS, SEGMENTS[0])
    with pytest.raises(ValueError, match="a 1 at position 5 after a 0"):
        model.logits(IDS[0], attention_mask=np.array([1, 1, 1, 1, 0, 1, 0, 0, 0, 0]))
    with pytest.raises(ValueError, match="all 0"):
        model.logits(IDS[0], attention_mask=np.zeros(10, dtype=np.int64))
    with pytest.raises(ValueError, match="token 41"):
        model.logits(np.array([41]))
    with pytest.raises(ValueError, match="13 tokens.*12 positions"):
        model.logits(np.zeros(13, dtype=np.int64))
    # torch tensors and a boolean mask go in too
    assert model.logits(torch.tensor(IDS), attention_mask=torch.tensor(MASK, dtype=torch.bool)).shape == (2, 3)


def test_paper_004_on_bert(tmp_path):
    """The compressions act on the encoder's own matrices: Tucker on W_Q, W_K, W_V, W_O of one layer (the query
    written back as query.weight = W_Q^T); the logits are the reference's on the written weights."""
    w = rounded(random_weights(CONFIG, seed=6), "F32")
    model = tprod.BertForSequenceClassification.load(write_folder(tmp_path / "in", w, CONFIG))
    assert model.parameter_count() == sum(t.numel() for t in w.values())
    [tucker] = model.compress_attention((8, 3, 2), layers=[0])
    model.save(tmp_path / "out")
    out = {k: v[2] for k, v in read_safetensors(tmp_path / "out" / "model.safetensors").items()}
    h = "bert.encoder.layer.0.attention."
    qkvo = [w[h + n].T.numpy() for n in ("self.query.weight", "self.key.weight", "self.value.weight",
                                         "output.dense.weight")]
    expected = tprod.multihead_tucker(*qkvo, CONFIG["num_attention_heads"], (8, 3, 2))
    np.testing.assert_allclose(out[h + "self.query.weight"].numpy(), expected.query.T, rtol=0, atol=1e-13)
    np.testing.assert_allclose(out[h + "output.dense.weight"].numpy(), expected.output.T, rtol=0, atol=1e-13)
    assert torch.equal(out["bert.encoder.layer.1.attention.self.key.weight"],
                       w["bert.encoder.layer.1.attention.self.key.weight"])
    assert_close(model.logits(IDS, SEGMENTS, MASK), classifier_logits(out, CONFIG, IDS, SEGMENTS, MASK))
