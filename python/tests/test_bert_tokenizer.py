# SPDX-License-Identifier: Apache-2.0
"""tprod.BertTokenizer against BERT's published algorithm written here: Google's tokenization.py (BasicTokenizer:
clean, space the CJK ideographs, split at whitespace, lower-case and strip accents, split off punctuation; then
WordpieceTokenizer: greedy longest match first, "##" continuations, [UNK] for words over 100 characters or with a part
no piece matches), with unicodedata's categories. On bert-base-uncased's vocabulary (scripts/get-bert-vocabulary.sh,
under $TPROD_DATA_DIR/bert-vocabulary), every message of the text corpus and hostile text; on a small vocabulary
written here where those are absent."""
import os
import pathlib
import unicodedata

import numpy as np
import pytest

import tprod

if not hasattr(tprod, "BertTokenizer"):
    pytest.skip("this tprod was built without tprod::text (ICU)", allow_module_level=True)

DATA = pathlib.Path(os.environ.get("TPROD_DATA_DIR", pathlib.Path(__file__).resolve().parents[2] / "build" / "data"))
VOCABULARY = DATA / "bert-vocabulary"
CORPUS = DATA / "spam-assassin"


class ReferenceWordPiece:
    """tokenization.py's FullTokenizer (BasicTokenizer, then WordpieceTokenizer)."""

    def __init__(self, vocab, lower_case=True):
        self.vocab = {t: i for i, t in enumerate(vocab)}
        self.lower_case = lower_case

    @staticmethod
    def is_whitespace(c):
        return c in " \t\n\r" or unicodedata.category(c) == "Zs"

    @staticmethod
    def is_control(c):
        return c not in "\t\n\r" and unicodedata.category(c).startswith("C")

    @staticmethod
    def is_punctuation(c):
        cp = ord(c)
        return 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126 or \
            unicodedata.category(c).startswith("P")

    @staticmethod
    def is_cjk(cp):
        return any(a <= cp <= b for a, b in [(0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
                                             (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF),
                                             (0x2F800, 0x2FA1F)])

    def basic(self, text):
        cleaned = []
        for c in text:
            if ord(c) == 0 or ord(c) == 0xFFFD or self.is_control(c):
                continue
            cleaned.append(" " if self.is_whitespace(c) else f" {c} " if self.is_cjk(ord(c)) else c)
        words = []
        for token in "".join(cleaned).strip().split():
            if self.lower_case:
                token = "".join(c for c in unicodedata.normalize("NFD", token.lower())
                                if unicodedata.category(c) != "Mn")
            word = []
            for c in token:
                if self.is_punctuation(c):
                    if word:
                        words.append("".join(word))
                    words.append(c)
                    word = []
                else:
                    word.append(c)
            if word:
                words.append("".join(word))
        return " ".join(words).split()

    def wordpiece(self, word):
        if len(word) > 100:
            return ["[UNK]"]
        pieces, start = [], 0
        while start < len(word):
            end, found = len(word), None
            while start < end:
                piece = ("##" if start > 0 else "") + word[start:end]
                if piece in self.vocab:
                    found = piece
                    break
                end -= 1
            if found is None:
                return ["[UNK]"]
            pieces.append(found)
            start = end
        return pieces

    def tokenize(self, text):
        return [p for w in self.basic(text) for p in self.wordpiece(w)]


HOSTILE = [
    "", " ", "a", "\n", "Hello, World!", "UNaffable running jumped", "don't  STOP 12345 1.5e-3 ½ ⅔ Ⅻ ٣٤ ²³",
    "ça va? Ünïcödé — «quotes» “curly” 東京タワー 한국어 עברית العربية हिन्दी 🎉🎉 👩‍👩‍👧 e\u0301",
    "\x00\x01\x07\x1b[31mred\x1b[0m\x7f\x85\u200b\u200d\ufeff\u2028x\u2029y\ufffd",
    "ΣΑΣ ΟΔΟΣ İstanbul ǅemal ß ﬁ", "x" * 99, "y" * 100, "z" * 101, "supercalifragilisticexpialidocious" * 3,
    "!!!" * 500, "\t\ttab\r\nnew\u3000ideographic\u00a0nbsp", "[CLS] [SEP] [MASK] are text here",
    "中文字符和English混合", "𠀀𠀁 ﬀ \U0002a700", "a" + "\u0301" * 50,
]

SMALL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able", "##ab", "##le", "!", ",", "hello",
         "world", "run", "##ning", "jump", "##ed", "a", "b", "c", "x", "##x", "y", "##y", "中", "文", "e", "ca", "va",
         "?", "'", "t", "don", "stop", "1", "##2", "##3", "##45", "."]


def check_equal(tok, ref, text):
    assert tok.tokenize(text) == ref.tokenize(text), repr(text[:80])
    ids = tok.ids(text)
    assert ids.dtype == np.int64
    assert ids.tolist() == [ref.vocab[t] for t in ref.tokenize(text)], repr(text[:80])


@pytest.fixture(scope="module")
def small_vocabulary(tmp_path_factory):
    path = tmp_path_factory.mktemp("small") / "vocab.txt"
    path.write_text("".join(t + "\n" for t in SMALL), encoding="utf-8")
    return path


def test_small_vocabulary_equals_the_reference(small_vocabulary):
    for lower in (True, False):
        tok, ref = tprod.BertTokenizer(small_vocabulary, lower_case=lower), ReferenceWordPiece(SMALL, lower)
        assert len(tok) == len(SMALL) and tok.lower_case == lower
        for text in HOSTILE:
            check_equal(tok, ref, text)
    tok = tprod.BertTokenizer(small_vocabulary)
    assert tok.tokenize("Unaffable, RUNNING!") == ["un", "##aff", "##able", ",", "run", "##ning", "!"]
    assert tok.tokenize("unab") == ["un", "##ab"]
    assert tok.tokenize("unz hello") == ["[UNK]", "hello"]  # "##z" matches nothing: the whole word is [UNK]
    assert tok.tokenize("xxx" + "x" * 97) == ["x"] + ["##x"] * 99
    assert tok.tokenize("x" * 101) == ["[UNK]"]


def test_invalid_utf8_reads_as_replacement_characters(small_vocabulary):
    tok, ref = tprod.BertTokenizer(small_vocabulary), ReferenceWordPiece(SMALL)
    for raw in [b"\xff", b"a\x80b", b"\xe6\x9d", b"hello\xe6\x9d\xb1\xe4world", b"\xc0\xaf x \xed\xa0\x80"]:
        assert tok.tokenize(raw) == ref.tokenize(raw.decode("utf-8", errors="replace")), raw


def test_encode_frames_and_truncates(small_vocabulary):
    tok = tprod.BertTokenizer(small_vocabulary)
    cls, sep = tok.id("[CLS]"), tok.id("[SEP]")
    ids, segments = tok.encode("hello world")
    assert ids.tolist() == [cls, tok.id("hello"), tok.id("world"), sep] and segments.tolist() == [0] * 4
    ids, segments = tok.encode("a b c", "x y")
    assert ids.tolist() == [cls] + [tok.id(t) for t in "abc"] + [sep, tok.id("x"), tok.id("y"), sep]
    assert segments.tolist() == [0] * 5 + [1] * 3
    # longest first: a b c | x y into 7 ids keeps a b | x y
    ids, segments = tok.encode("a b c", "x y", max_length=7)
    assert ids.tolist() == [cls, tok.id("a"), tok.id("b"), sep, tok.id("x"), tok.id("y"), sep]
    assert tok.encode("a b c", max_length=3)[0].tolist() == [cls, tok.id("a"), sep]
    with pytest.raises(ValueError, match="max_length 2"):
        tok.encode("a", max_length=2)
    assert tok.decode(tok.ids("Unaffable running")) == "unaffable running"


def test_bad_files_and_ids(small_vocabulary, tmp_path):
    tok = tprod.BertTokenizer(small_vocabulary)
    with pytest.raises(ValueError, match="id 1000 at position 1"):
        tok.decode(np.array([1, 1000]))
    with pytest.raises(ValueError, match="no token 'zzz'"):
        tok.id("zzz")
    dup = tmp_path / "dup.txt"
    dup.write_text("[UNK]\n[CLS]\n[SEP]\na\na\n")
    with pytest.raises(OSError, match="line 5 repeats the token 'a'"):
        tprod.BertTokenizer(dup)
    empty = tmp_path / "empty.txt"
    empty.write_text("[UNK]\n\n")
    with pytest.raises(OSError, match="line 2 is empty"):
        tprod.BertTokenizer(empty)
    nocls = tmp_path / "nocls.txt"
    nocls.write_text("[UNK]\n[SEP]\n")
    with pytest.raises(OSError, match=r"no token \[CLS\]"):
        tprod.BertTokenizer(nocls)
    with pytest.raises(OSError, match="cannot be opened"):
        tprod.BertTokenizer(tmp_path / "none.txt")
    with pytest.raises(OSError, match="no vocab.txt"):
        tprod.BertTokenizer.from_folder(tmp_path)
    (tmp_path / "cased").mkdir()
    (tmp_path / "cased" / "vocab.txt").write_text("".join(t + "\n" for t in SMALL))
    (tmp_path / "cased" / "tokenizer_config.json").write_text('{"do_lower_case": false}')
    assert tprod.BertTokenizer.from_folder(tmp_path / "cased").lower_case is False


bert_files = pytest.mark.skipif(not (VOCABULARY / "vocab.txt").exists(),
                                reason=f"BERT's vocabulary is not in {VOCABULARY} (scripts/get-bert-vocabulary.sh)")


def reference_vocabulary():
    return (VOCABULARY / "vocab.txt").read_text(encoding="utf-8").split("\n")[:-1]


@bert_files
def test_bert_vocabulary_known_ids():
    tok = tprod.BertTokenizer.from_folder(VOCABULARY)
    assert len(tok) == 30522
    assert [tok.id(t) for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")] == [0, 100, 101, 102, 103]
    # bert-base-uncased's ids, as the package's README prints them
    assert tok.ids("i like strawberries").tolist() == [1045, 2066, 13137, 20968]
    assert tok.tokenize("i like strawberries") == ["i", "like", "straw", "##berries"]


@bert_files
def test_bert_vocabulary_equals_the_reference_on_hostile_text():
    tok, ref = tprod.BertTokenizer.from_folder(VOCABULARY), ReferenceWordPiece(reference_vocabulary())
    for text in HOSTILE:
        check_equal(tok, ref, text)


@bert_files
@pytest.mark.skipif(not CORPUS.exists(), reason=f"no text corpus in {CORPUS} (scripts/make-text-corpus.sh)")
def test_bert_vocabulary_equals_the_reference_on_every_corpus_message():
    """Every message (TPROD_CORPUS_EVERY=k checks every k-th: CI takes every 8th)."""
    tok, ref = tprod.BertTokenizer.from_folder(VOCABULARY), ReferenceWordPiece(reference_vocabulary())
    files = sorted(CORPUS.glob("*/*/*.txt"))[:: int(os.environ.get("TPROD_CORPUS_EVERY", "1"))]
    assert len(files) > 100
    pieces = 0
    for f in files:
        raw = f.read_bytes()
        got = tok.tokenize(raw)
        assert got == ref.tokenize(raw.decode("utf-8", errors="replace")), f.name
        pieces += len(got)
    assert pieces > 1000
