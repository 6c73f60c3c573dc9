#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerates the result tables of the examples' pages (docs/examples/<example>.md) from full runs: for every table
# named (default: all ten; a table is named after its example, or names the example in program[] below), it runs
# the command below — the default full mode unless the command says otherwise, every model from 3 seeds, on both
# cores of the machine it runs on — writes the run's summary as a table between the page's
# "<!-- summary-table <name> -->" markers (examples/support/summary_table.cpp), with a note of the date, the command
# and the load average before and after the run, and copies the plot to docs/img/examples/<name>.png.
# The run's files stay in example-output/<name>/. The prose around a table (which claims hold against the spread) is
# the page author's: read the new table against it.
#
#   scripts/regenerate-pages.sh [NAME...]
#
# Long: on the 2-core VM of the pages the full runs take about 11 min (ltransformer_text), 3 min
# (tensorllm_denoise, after ltransformer_text), 2 min (mpo_finetune), 67 min (language_model), 1.5 min
# (multilinear_attention, 2026-11-27; 18 min before the CPU work of that week), 15 s (multilinear_attention-n12, a
# second table on that page), 3 min (tsa_text_classifier) and 4 min (tcp_vit, 2026-11-27; 2 h 10 min was an estimate
# from a loaded machine and older kernels), 35 min (gpt2_tensorllm, 2026-11-28, the machine partly loaded), 10 min
# (bert_finetune, 2026-11-28).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

all=(ltransformer_text tensorllm_denoise mpo_finetune language_model multilinear_attention multilinear_attention-n12
  tsa_text_classifier tcp_vit gpt2_tensorllm bert_finetune)
names=("$@")
[[ ${#names[@]} -gt 0 ]] || names=("${all[@]}")
corpus="$build_dir/data/spam-assassin"

# The command line of every example (after build/examples/<name>), as its page prints it, and its table's columns
# (summary_table --columns: KEY[:HEADING[:FORMAT]]).
declare -A args columns program  # program: the example a table comes from, where it is not the table's name
default_columns="name:model,parameters,encoder_parameters:encoder parameters,train_accuracy:train acc.:pct"
default_columns+=",test_accuracy_runs:test acc. per seed:pct,test_accuracy:test acc.:pct,seconds_per_epoch:s/epoch:f1"
args[ltransformer_text]="--data $corpus --threads 2"
columns[ltransformer_text]="name:model,parameters,encoder_parameters:encoder parameters,encoder_ratio:encoder ratio:f3"
columns[ltransformer_text]+=",train_accuracy:train acc. (1000 docs):pct,test_accuracy_runs:test acc. per seed:pct"
columns[ltransformer_text]+=",test_accuracy:test acc.:pct,seconds_per_epoch:s/epoch:f1"
args[tensorllm_denoise]="--data $corpus --threads 2 --checkpoint-dir example-output/ltransformer_text"
columns[tensorllm_denoise]="name:variant,rank:ranks,compression_ratio:CR:f2,encoder_parameters:encoder parameters"
columns[tensorllm_denoise]+=",relative_error:change of W:f3,train_accuracy:train acc.:pct"
columns[tensorllm_denoise]+=",test_accuracy_runs:test acc. per seed:pct,test_accuracy:test acc.:pct,test_loss:test loss:f4"
args[mpo_finetune]="--data $corpus --threads 2"
columns[mpo_finetune]="name:model,parameters:trained parameters,encoder_parameters:encoder (trained)"
columns[mpo_finetune]+=",train_accuracy:train acc.:pct,test_accuracy_runs:test acc. per seed:pct"
columns[mpo_finetune]+=",test_accuracy:test acc.:pct,test_loss:test loss:f3,seconds_per_epoch:s/epoch:f2"
args[language_model]="--data $corpus --threads 2"
columns[language_model]="name:model,parameters,encoder_parameters:decoder parameters"
columns[language_model]+=",test_perplexity:test perplexity:f1,test_accuracy:next-token acc.:pct"
columns[language_model]+=",train_perplexity:train perplexity (1000 windows):f1,seconds_per_epoch:s/epoch:f1"
args[multilinear_attention]="--data $corpus --threads 2"
columns[multilinear_attention]="$default_columns"
# Paper 003 at a length where eq. 2 does compress (N = 12 ≤ 14 at d = 64, R = 16): a second table on the same page.
program[multilinear_attention-n12]=multilinear_attention
args[multilinear_attention-n12]="--data $corpus --threads 2 --max-length 12"
columns[multilinear_attention-n12]="name:model,attention_parameters:attention parameters,parameters"
columns[multilinear_attention-n12]+=",train_accuracy:train acc.:pct,test_accuracy_runs:test acc. per seed:pct"
columns[multilinear_attention-n12]+=",test_accuracy:test acc.:pct,seconds_per_epoch:s/epoch:f1"
args[tsa_text_classifier]="--data $corpus --threads 2 --seeds 5"  # the paper's 5 trials
columns[tsa_text_classifier]="name:model,parameters,encoder_parameters:attention parameters,train_accuracy:train acc.:pct"
columns[tsa_text_classifier]+=",test_accuracy_runs:test acc. per seed:pct,test_accuracy:test acc.:pct"
columns[tsa_text_classifier]+=",seconds_per_epoch:s/epoch:f1"
args[tcp_vit]="--epochs 3 --threads 2"
columns[tcp_vit]="$default_columns"
args[gpt2_tensorllm]="--data $corpus --threads 2 --tokenizer $build_dir/data/gpt2-vocabulary"
columns[gpt2_tensorllm]="name:variant,attention_stored:attention numbers stored:int,test_perplexity:test perplexity:f2"
columns[gpt2_tensorllm]+=",test_accuracy:next-token acc.:pct,train_perplexity:train perplexity (500 windows):f2"
args[bert_finetune]="--data $corpus --threads 2 --tokenizer $build_dir/data/bert-vocabulary"
columns[bert_finetune]="name:model,parameters:trained parameters,encoder_parameters:encoder (trained)"
columns[bert_finetune]+=",train_accuracy:train acc.:pct,test_accuracy_runs:test acc. per seed:pct"
columns[bert_finetune]+=",test_accuracy:test acc.:pct,test_loss:test loss:f3,seconds_per_epoch:s/epoch:f2"

for name in "${names[@]}"; do
  if [[ -z "${args[$name]:-}" ]]; then
    echo "regenerate-pages: unknown example '$name' (one of: ${all[*]})" >&2
    exit 2
  fi
done

tprod_configure -DTPROD_BUILD_EXAMPLES=ON "${measured_build[@]}"
programs=()
for name in "${names[@]}"; do programs+=("${program[$name]:-$name}"); done
cmake --build "$build_dir" --target "${programs[@]}" summary_table -j "$jobs"
"$repo_root/scripts/make-text-corpus.sh" "$corpus"
"$repo_root/scripts/get-gpt2-vocabulary.sh" "$build_dir/data/gpt2-vocabulary"
"$repo_root/scripts/get-bert-vocabulary.sh" "$build_dir/data/bert-vocabulary"

for name in "${names[@]}"; do
  example=${program[$name]:-$name}
  out="example-output/$name"
  if [[ "$name" == tensorllm_denoise && ! -d example-output/ltransformer_text/checkpoints ]]; then
    echo "regenerate-pages: tensorllm_denoise reads ltransformer_text's checkpoints: regenerate ltransformer_text" \
      "first (scripts/regenerate-pages.sh ltransformer_text tensorllm_denoise)" >&2
    exit 1
  fi
  mkdir -p "$out"
  before=$(cut -d' ' -f1-3 /proc/loadavg)
  start=$(date -u +"%Y-%m-%d %H:%M")
  # shellcheck disable=SC2086  # args are words
  "$build_dir/examples/$example" ${args[$name]} --out "$out" --summary "$out/summary.json"
  after=$(cut -d' ' -f1-3 /proc/loadavg)
  end=$(date -u +"%H:%M")
  shown_args=${args[$name]//$build_dir\//build\/}
  note="*Generated by \`scripts/regenerate-pages.sh $name\` on $start–$end UTC ($(nproc) cores; load average"
  note+=" $before before the run, $after after it) from \`build/examples/$example $shown_args --out $out"
  note+=" --summary $out/summary.json\`.*"
  "$build_dir/examples/summary_table" --summary "$out/summary.json" --columns "${columns[$name]}" \
    --page "docs/examples/$example.md" --table "$name" --note "$note"
  for plot in training_curves "$name" denoise; do  # the plot: most examples, tcp_vit and tsa (their names), tensorllm_denoise
    if [[ -f "$out/$plot.png" ]]; then
      cp "$out/$plot.png" "docs/img/examples/$name.png"
      break
    fi
  done
  echo "regenerate-pages: docs/examples/$example.md has the table $name of this run"
done
