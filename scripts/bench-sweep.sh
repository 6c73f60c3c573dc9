#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs two sweeps of bench_algebra and writes, under OUT (default docs/img):
#   lproduct: the L-product (lproduct/dct/s{S}_p{P} on every thread and on one, beside gemm_peak/t1 and tN)
#     sweep.csv            one row per case: name, threads, S, P, GFLOP/s (medians of the repetitions)
#     sweep.png            GFLOP/s against S, one line per (P, threads), the two GEMM peaks as horizontal lines
#   transforms: the transform grid (transform/{dct,dft,matrix}/m{M}_n{N}_p{P} beside copy_limit, all threads)
#     transform_grid.csv   one row per case: name, kind, M, N, P, median seconds, GB/s of the input tensor
#     transform_grid.png   GB/s against P for the square shapes, the copy of the same bytes beside each transform
# Usage: scripts/bench-sweep.sh [BUILD_DIR] [OUT] [lproduct|transforms|transform-plot|all]   (defaults: build,
# docs/img, all; bench_algebra must be built; transform-plot redraws the PNG from an existing CSV)
set -euo pipefail
build=${1:-build}
out=${2:-docs/img}
which=${3:-all}
[[ $which == lproduct || $which == transforms || $which == transform-plot || $which == all ]] ||
  { echo "bench-sweep: the third argument must be lproduct, transforms, transform-plot or all, not '$which'" >&2
    exit 1; }
bench="$build/bench/bench_algebra"
[[ -x "$bench" ]] || { echo "bench-sweep: $bench not found: build the target bench_algebra first" >&2; exit 1; }
command -v gnuplot >/dev/null || { echo "bench-sweep: gnuplot not found (apt-get install gnuplot-nox)" >&2; exit 1; }
mkdir -p "$out"
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
# medians FILTER: runs the matching cases with repetitions into $raw (Google Benchmark's CSV).
medians() {
  "$bench" --benchmark_filter="$1" --benchmark_repetitions="${TPROD_BENCH_REPETITIONS:-3}" \
    --benchmark_report_aggregates_only=true --benchmark_format=csv >"$raw" 2>/dev/null
}

lproduct_sweep() {
  medians '^(lproduct/dct/s[0-9]+_p[0-9]+(/t1)?|gemm_peak/t(1|N))(/real_time)?$'
  # CSV columns: name,iterations,real_time,cpu_time,time_unit,bytes_per_second,items_per_second,label,
  # error_occurred,error_message,<counters...>; keep the medians and the GFLOP/s counter.
  awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "\"GFLOP/s\"" || $i == "GFLOP/s") g = i; next }
    $1 ~ /_median"?$/ {
      name = $1; gsub(/"/, "", name); sub(/_median$/, "", name); sub(/\/real_time$/, "", name)
      threads = (name ~ /\/t1$/) ? 1 : "N"
      s = ""; p = ""
      if (match(name, /s[0-9]+_p[0-9]+/)) { split(substr(name, RSTART + 1, RLENGTH - 1), sp, "_p"); s = sp[1]; p = sp[2] }
      print name "," threads "," s "," p "," $g
    }' "$raw" >"$out/sweep.csv"
  peak1=$(awk -F, '$1 == "gemm_peak/t1" { print $5 }' "$out/sweep.csv")
  peakN=$(awk -F, '$1 == "gemm_peak/tN" { print $5 }' "$out/sweep.csv")
  plot=""
  for p in 4 8 16 64; do
    for t in N 1; do
      awk -F, -v p="$p" -v t="$t" '$4 == p && $2 == t { print $3, $5 }' "$out/sweep.csv" | sort -n >"$out/.sweep_p${p}_t${t}.dat"
      label="p = $p, $([[ $t == N ]] && echo "all threads" || echo "1 thread")"
      style=$([[ $t == N ]] && echo "lp lw 2" || echo "lp lw 1 dt 2")
      plot+="'$out/.sweep_p${p}_t${t}.dat' using 1:2 with $style title '$label', "
    done
  done
  gnuplot <<GNUPLOT
  set terminal pngcairo size 900,700 noenhanced
  set output '$out/sweep.png'
  set title 'L-product (DCT, float) S×S×P times S×S×P: GFLOP/s = 2·S³·P / time'
  set xlabel 'S'
  set ylabel 'GFLOP/s'
  set logscale x 2
  set key below maxrows 5
  set grid
  plot ${plot} ${peakN:-0} with lines lw 3 lc rgb 'black' title 'gemm_peak/tN (1024³ SGEMM, all threads)', ${peak1:-0} with lines lw 2 lc rgb 'gray' title 'gemm_peak/t1'
GNUPLOT
  rm -f "$out"/.sweep_p*_t*.dat
  echo "bench-sweep: wrote $out/sweep.csv and $out/sweep.png"
}

transform_grid() {
  medians '^(transform/(dct|dft|matrix)|copy_limit)/m[0-9]+_n[0-9]+_p[0-9]+(/real_time)?$'
  # real_time (ns) and bytes_per_second are columns 3 and 6.
  awk -F, '$1 ~ /_median"?$/ {
      name = $1; gsub(/"/, "", name); sub(/_median$/, "", name); sub(/\/real_time$/, "", name)
      kind = name; sub(/\/m[0-9].*$/, "", kind); sub(/^transform\//, "", kind)
      match(name, /m[0-9]+_n[0-9]+_p[0-9]+/); split(substr(name, RSTART + 1, RLENGTH - 1), mnp, /_[np]/)
      printf "%s,%s,%s,%s,%s,%.9g,%.4g\n", name, kind, mnp[1], mnp[2], mnp[3], $3 * 1e-9, $6 * 1e-9
    }' "$raw" >"$out/transform_grid.csv"
  transform_grid_plot
}

# Draws transform_grid.png from transform_grid.csv (also alone: the third argument transform-plot).
transform_grid_plot() {
  local plot="" panel
  for s in 64 256 1024; do
    panel="set title '${s}×${s}×p float'; plot "
    for kind in copy_limit dct dft matrix; do
      awk -F, -v s="$s" -v k="$kind" '$2 == k && $3 == s && $4 == s && $5 <= 64 { print $5, $7 }' "$out/transform_grid.csv" |
        sort -n >"$out/.grid_${kind}_${s}.dat"
      style=$([[ $kind == copy_limit ]] && echo "lp lw 3 lc rgb 'black'" || echo "lp lw 2")
      panel+="'$out/.grid_${kind}_${s}.dat' using 1:2 with $style title '$kind', "
    done
    plot+="${panel%, }
"
  done
  gnuplot <<GNUPLOT
set terminal pngcairo size 1200,450 noenhanced
set output '$out/transform_grid.png'
set multiplot layout 1,3 title 'Transforms along the tubes (automatic path, all threads): GB/s of the input tensor, beside a copy of the same bytes'
set xlabel 'p'
set ylabel 'GB/s'
set logscale x 2
set logscale y 10
set xrange [3.5:76]
set xtics (4, 8, 16, 32, 64)
set key top right
set grid
${plot}
unset multiplot
GNUPLOT
  rm -f "$out"/.grid_*.dat
  echo "bench-sweep: wrote $out/transform_grid.csv and $out/transform_grid.png"
}

case $which in
  lproduct) lproduct_sweep ;;
  transforms) transform_grid ;;
  transform-plot) transform_grid_plot ;;
  all) lproduct_sweep; transform_grid ;;
esac
