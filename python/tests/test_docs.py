# SPDX-License-Identifier: Apache-2.0
"""The Python fragments of the documentation run as written: every ```python block of docs/howto/python.md and
docs/howto/published-checkpoints.md (in order, sharing one namespace, as a reader pastes them) and of the README's
Python section."""
import pathlib
import re

import pytest

pytest.importorskip("torch")

ROOT = pathlib.Path(__file__).resolve().parents[2]


def python_blocks(path):
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.S)


def prepare_checkpoints_page(folder):
    """What docs/howto/published-checkpoints.md reads: a GPT-2 folder "gpt2" and a BERT folder "bert" (the real
    vocabulary sizes, small otherwise, random weights, the BERT without its classifier), "gpt2-vocabulary" and
    "bert-vocabulary" (the real files where scripts/get-gpt2-vocabulary.sh and get-bert-vocabulary.sh put them,
    else the small vocabularies of the tokenizer tests)."""
    import shutil

    import tprod
    from test_gpt2 import CONFIG, random_weights, write_folder
    from test_gpt2_tokenizer import VOCABULARY

    if not hasattr(tprod, "GPT2") or not hasattr(tprod, "GPT2Tokenizer"):
        pytest.skip("this tprod was built without tprod::io or tprod::text")
    config = CONFIG | {"vocab_size": 50257, "n_positions": 64}
    write_folder(folder / "gpt2", random_weights(config, seed=9), config)
    import test_bert
    import test_bert_tokenizer
    bert_config = test_bert.CONFIG | {"vocab_size": 30522, "max_position_embeddings": 64}
    bert = test_bert.random_weights(bert_config, seed=9)
    write_folder(folder / "bert", {k: v for k, v in bert.items() if not k.startswith("classifier")}, bert_config)
    if (test_bert_tokenizer.VOCABULARY / "vocab.txt").exists():
        shutil.copytree(test_bert_tokenizer.VOCABULARY, folder / "bert-vocabulary")
    else:
        (folder / "bert-vocabulary").mkdir()
        (folder / "bert-vocabulary" / "vocab.txt").write_text("".join(t + "\n" for t in test_bert_tokenizer.SMALL))
    if (VOCABULARY / "encoder.json").exists():
        shutil.copytree(VOCABULARY, folder / "gpt2-vocabulary")
    else:
        import json
        from test_gpt2_tokenizer import ReferenceBPE
        byte_symbols = ReferenceBPE({}, []).byte_encoder
        (folder / "gpt2-vocabulary").mkdir()
        (folder / "gpt2-vocabulary" / "encoder.json").write_text(
            json.dumps({byte_symbols[b]: b for b in range(256)}), encoding="utf-8")
        (folder / "gpt2-vocabulary" / "vocab.bpe").write_text("#version: 0.2\n", encoding="utf-8")


@pytest.mark.parametrize("page", ["docs/howto/python.md", "README.md", "docs/howto/published-checkpoints.md"])
def test_fragments_run(page, tmp_path, monkeypatch):
    blocks = python_blocks(ROOT / page)
    assert blocks, f"{page} has no Python fragment"
    monkeypatch.chdir(tmp_path)  # a fragment may write files (torch.save)
    if page.endswith("published-checkpoints.md"):
        prepare_checkpoints_page(tmp_path)
    namespace = {}
    for block in blocks:
        exec(compile(block, f"{page} fragment", "exec"), namespace)
