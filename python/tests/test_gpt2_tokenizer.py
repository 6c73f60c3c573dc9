# SPDX-License-Identifier: Apache-2.0
"""tprod.GPT2Tokenizer against GPT-2's published algorithm written here: OpenAI's encoder.py (bytes_to_unicode, the
merge loop that joins every occurrence of the best-ranked pair), its pattern run by Python's own `re` engine with
\\p{L}, \\p{N} and \\s spelled out as character classes from unicodedata and Unicode's White_Space list. On GPT-2's
real files (scripts/get-gpt2-vocabulary.sh, under $TPROD_DATA_DIR/gpt2-vocabulary), every message of the text corpus
($TPROD_DATA_DIR/spam-assassin) and hostile text; on a small vocabulary written here where those are absent."""
import json
import os
import pathlib
import re
import sys
import time
import unicodedata

import numpy as np
import pytest

import tprod

if not hasattr(tprod, "GPT2Tokenizer"):
    pytest.skip("this tprod was built without tprod::text (ICU)", allow_module_level=True)

DATA = pathlib.Path(os.environ.get("TPROD_DATA_DIR", pathlib.Path(__file__).resolve().parents[2] / "build" / "data"))
VOCABULARY = DATA / "gpt2-vocabulary"
CORPUS = DATA / "spam-assassin"

# Unicode's White_Space property (PropList.txt), which the `regex` module's \s matches in encoder.py's pattern.
WHITE_SPACE = [(0x09, 0x0D), (0x20, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A),
               (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000)]


def char_class(ranges):
    return "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges)


def category_ranges(prefix):
    ranges, start = [], None
    for c in range(sys.maxunicode + 2):
        inside = c <= sys.maxunicode and unicodedata.category(chr(c)).startswith(prefix)
        if inside and start is None:
            start = c
        elif not inside and start is not None:
            ranges.append((start, c - 1))
            start = None
    return ranges


class ReferenceBPE:
    """encoder.py, with its pattern's Unicode classes spelled out for `re`."""

    def __init__(self, encoder, merges):
        self.encoder = encoder
        self.ranks = {tuple(m.split(" ")): i for i, m in enumerate(merges)}
        bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
        cs = bs[:]
        n = 0
        for b in range(256):
            if b not in bs:
                bs.append(b)
                cs.append(256 + n)
                n += 1
        self.byte_encoder = dict(zip(bs, map(chr, cs)))
        L, N, S = char_class(category_ranges("L")), char_class(category_ranges("N")), char_class(WHITE_SPACE)
        self.pattern = re.compile(
            rf"'s|'t|'re|'ve|'m|'ll|'d| ?[{L}]+| ?[{N}]+| ?[^{S}{L}{N}]+|[{S}]+(?![^{S}])|[{S}]+")
        self.cache = {}

    def bpe(self, token):
        if token in self.cache:
            return self.cache[token]
        word = tuple(token)
        while len(word) > 1:
            pairs = {(word[i], word[i + 1]) for i in range(len(word) - 1)}
            bigram = min(pairs, key=lambda pair: self.ranks.get(pair, float("inf")))
            if bigram not in self.ranks:
                break
            first, second = bigram
            new_word, i = [], 0
            while i < len(word):
                try:
                    j = word.index(first, i)
                except ValueError:
                    new_word.extend(word[i:])
                    break
                new_word.extend(word[i:j])
                i = j
                if word[i] == first and i < len(word) - 1 and word[i + 1] == second:
                    new_word.append(first + second)
                    i += 2
                else:
                    new_word.append(word[i])
                    i += 1
            word = tuple(new_word)
        self.cache[token] = word
        return word

    def pieces(self, text):
        return self.pattern.findall(text)

    def encode(self, text):
        ids = []
        for piece in self.pieces(text):
            symbols = "".join(self.byte_encoder[b] for b in piece.encode("utf-8"))
            ids.extend(self.encoder[s] for s in self.bpe(symbols))
        return ids


HOSTILE = [
    "", " ", "  ", "a", "\n", " \n ", "   x", "\t\tx", "x   ", "\u3000\u3000y", "\u00a0z",
    "I'm here, they're not; we've 'll 'd 's 't 'm 'x ''s",
    "don't  STOP 12345 1.5e-3 ½ ⅔ Ⅻ ٣٤ ²³",
    "ça va? Ünïcödé — «quotes» “curly” 東京タワー 한국어 עברית العربية हिन्दी 🎉🎉 👩‍👩‍👧 e\u0301",
    "\x00\x01\x07\x1b[31mred\x1b[0m\x7f\x85\u200b\u200d\ufeff\u2028\u2029",
    "x" * 5000, "ab" * 2000 + " " + "9" * 3000, " " * 100 + "end", "!!!" * 500, "\n" * 50,
    "<|endoftext|> is text here",
]


def reference_for(tokenizer_files):
    encoder = json.loads(tokenizer_files[0].read_text(encoding="utf-8"))
    merges = [line for line in tokenizer_files[1].read_text(encoding="utf-8").split("\n")[1:] if line]
    return ReferenceBPE(encoder, merges)


@pytest.fixture(scope="module")
def small_files(tmp_path_factory):
    """A vocabulary written here: the 256 byte symbols and a few merges (GPT-2's first ones and some of its own)."""
    folder = tmp_path_factory.mktemp("small")
    ref = ReferenceBPE({}, [])
    symbols = [ref.byte_encoder[b] for b in range(256)]
    merges = ["Ġ t", "Ġ a", "h e", "i n", "r e", "o n", "Ġt he", "e r", "Ġ s", "a t", "Ġ w", "Ġ o", "e n", "Ġ c",
              "i t", "i s", "a n", "o r", "e s", "Ġ b", "e d", "Ġ f", "in g", "Ġ p", "o u", "Ġa n", "a l", "a r",
              "Ġt o", "Ġ m", "Ġo f", "Ġ in", "Ġ d", "Ġ h", "Ġan d", "x x", "xx xx", "a b", "ab ab"]
    for m in merges:
        a, b = m.split(" ")
        if a + b not in symbols:
            symbols.append(a + b)
    (folder / "encoder.json").write_text(json.dumps({s: i for i, s in enumerate(symbols)}), encoding="utf-8")
    (folder / "vocab.bpe").write_text("#version: 0.2\n" + "\n".join(merges) + "\n", encoding="utf-8")
    return folder / "encoder.json", folder / "vocab.bpe"


def check_equal(tok, ref, text):
    assert tok.pieces(text) == ref.pieces(text), repr(text[:80])
    ids = tok.encode(text)
    assert ids.dtype == np.int64
    assert ids.tolist() == ref.encode(text), repr(text[:80])
    assert tok.decode(ids) == text


def test_small_vocabulary_equals_the_reference(small_files):
    tok, ref = tprod.GPT2Tokenizer(*small_files), reference_for(small_files)
    assert len(tok) == len(ref.encoder)
    for text in HOSTILE + ["the cat and the hat in the house of the king, in spring"]:
        check_equal(tok, ref, text)
    # the merges of one pass join every occurrence left to right: "xxx" is "xx" + "x", "xxxx" is "xxxx"
    xx, xxxx = tok.id("xx"), tok.id("xxxx")
    assert tok.encode("xxx").tolist() == [xx, tok.id("x")]
    assert tok.encode("xxxxxxxx").tolist() == [xxxx, xxxx]


def test_invalid_utf8_reads_as_replacement_characters(small_files):
    tok, ref = tprod.GPT2Tokenizer(*small_files), reference_for(small_files)
    for raw in [b"\xff", b"a\x80b", b"\xe6\x9d", b"\xe6\x9d\xb1\xe4", b"\xf0\x9f\x8e", b"\xc0\xaf x \xed\xa0\x80"]:
        text = raw.decode("utf-8", errors="replace")
        assert tok.encode(raw).tolist() == ref.encode(text), raw
        assert tok.decode(tok.encode(raw)) == text


def test_a_megabyte_word_takes_linear_time(small_files):
    tok = tprod.GPT2Tokenizer(*small_files)
    start = time.perf_counter()
    ids = tok.encode("ab" * (1 << 19))
    assert time.perf_counter() - start < 10  # encoder.py's merge loop takes hours on this
    assert len(ids) == 1 << 18 and set(ids.tolist()) == {tok.id("abab")}


def test_bad_files_and_ids(small_files, tmp_path):
    tok = tprod.GPT2Tokenizer(*small_files)
    with pytest.raises(ValueError, match="id 100000 at position 1"):
        tok.decode(np.array([1, 100000]))
    with pytest.raises(ValueError, match="negative"):
        tok.decode(np.array([-1]))
    with pytest.raises(TypeError, match="1-D integer"):
        tok.decode(np.array([1.0]))
    with pytest.raises(ValueError, match="no symbol 'zzz'"):
        tok.id("zzz")
    bad = tmp_path / "bad.bpe"
    bad.write_text("#version: 0.2\na b\nc  d\n")
    with pytest.raises(OSError, match="line 3"):
        tprod.GPT2Tokenizer(small_files[0], bad)
    dup = tmp_path / "dup.json"
    dup.write_text(json.dumps({"a": 0, "b": 0}))
    with pytest.raises(OSError, match="'b'"):
        tprod.GPT2Tokenizer(dup, small_files[1])
    with pytest.raises(OSError, match="cannot be opened"):
        tprod.GPT2Tokenizer(tmp_path / "none.json", small_files[1])
    with pytest.raises(OSError, match="neither"):
        tprod.GPT2Tokenizer.from_folder(tmp_path)


gpt2_files = pytest.mark.skipif(not (VOCABULARY / "encoder.json").exists(),
                                reason=f"GPT-2's files are not in {VOCABULARY} (scripts/get-gpt2-vocabulary.sh)")


@gpt2_files
def test_gpt2_files_known_ids():
    tok = tprod.GPT2Tokenizer.from_folder(VOCABULARY)
    assert len(tok) == 50257 and tok.id("<|endoftext|>") == 50256
    assert tok.encode("Hello world!").tolist() == [15496, 995, 0]  # GPT-2's ids, as every port prints them


@gpt2_files
def test_gpt2_files_equal_the_reference_on_hostile_text():
    tok = tprod.GPT2Tokenizer.from_folder(VOCABULARY)
    ref = reference_for((VOCABULARY / "encoder.json", VOCABULARY / "vocab.bpe"))
    for text in HOSTILE:
        check_equal(tok, ref, text)


@gpt2_files
@pytest.mark.skipif(not CORPUS.exists(), reason=f"no text corpus in {CORPUS} (scripts/make-text-corpus.sh)")
def test_gpt2_files_equal_the_reference_on_every_corpus_message():
    """Every message (TPROD_CORPUS_EVERY=k checks every k-th: CI takes every 8th)."""
    tok = tprod.GPT2Tokenizer.from_folder(VOCABULARY)
    ref = reference_for((VOCABULARY / "encoder.json", VOCABULARY / "vocab.bpe"))
    files = sorted(CORPUS.glob("*/*/*.txt"))[:: int(os.environ.get("TPROD_CORPUS_EVERY", "1"))]
    assert len(files) > 100
    tokens = 0
    for f in files:
        raw = f.read_bytes()
        ids = tok.encode(raw)
        assert ids.tolist() == ref.encode(raw.decode("utf-8", errors="replace")), f.name
        tokens += len(ids)
    assert tokens > 1000
