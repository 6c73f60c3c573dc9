#!/usr/bin/env bash
# Runs the L-product sweep of bench_algebra (lproduct/dct/s{S}_p{P} on every thread and on one, beside
# gemm_peak/t1 and gemm_peak/tN) and writes, under OUT (default docs/img):
#   sweep.csv   one row per case: name, threads, S, P, GFLOP/s (medians of the repetitions)
#   sweep.png   GFLOP/s against S, one line per (P, threads), the two GEMM peaks as horizontal lines
# Usage: scripts/bench-sweep.sh [BUILD_DIR] [OUT]   (BUILD_DIR default: build; bench_algebra must be built)
set -euo pipefail
build=${1:-build}
out=${2:-docs/img}
bench="$build/bench/bench_algebra"
[[ -x "$bench" ]] || { echo "bench-sweep: $bench not found: build the target bench_algebra first" >&2; exit 1; }
command -v gnuplot >/dev/null || { echo "bench-sweep: gnuplot not found (apt-get install gnuplot-nox)" >&2; exit 1; }
mkdir -p "$out"
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
"$bench" --benchmark_filter='^(lproduct/dct/s[0-9]+_p[0-9]+(/t1)?|gemm_peak/t(1|N))(/real_time)?$' \
  --benchmark_repetitions="${TPROD_BENCH_REPETITIONS:-3}" --benchmark_report_aggregates_only=true \
  --benchmark_format=csv >"$raw" 2>/dev/null
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
