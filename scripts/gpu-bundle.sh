#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the CUDA backend's tests and benchmark here (no GPU needed: nvcc compiles and links the device code) and
# packs them into one folder that runs on a GPU machine with only a driver, the CUDA 13 libraries and Python:
#   bin/test_cuda, bin/bench_cuda, bin/ltransformer_text, bin/test_mpi, bin/bench_mpi
#                                   stripped, host code for the x86-64 baseline (no -march=native)
#   bin/mpirun, openmpi/            this machine's Open MPI runtime (mpirun, its components and PMIx's, help files),
#                                   relocated by environment variables in run.sh, for the MPI tests and scaling
#   lib/                            the shared libraries they load that are neither CUDA's nor the C library's
#                                   (FFTW, libgomp, libbenchmark, ...)
#   lib/fallback/                   this machine's libstdc++ and libgcc_s, used only where the GPU machine's are older
#   torch_lproduct_gpu.py, torch_encoder_gpu.py, ltransformer_text.py   the PyTorch peers (bench/peers/)
#   python/tprod, python/tests      the Python package (built for this machine's /usr/bin/python3) and its CUDA
#                                   tests (test_device.py), which run where the GPU machine's Python is the same
#                                   version and has pytest and PyTorch
#   run.sh                          runs everything there and writes the results to one folder
#
# On the GPU machine, with the device tool: `run` with carry: [".gpu-bundle"] and the command
#     bash .gpu-bundle/run.sh "$OUT"
# (append --quick for the tests, the s256 benchmark cases and the peer's S = 256 only, or --filter=REGEX for the
# benchmark cases matching REGEX; --sanitize adds compute-sanitizer). The results come back
# under $OUT: gpu-run.log (everything), test_cuda.log, bench_cuda.json, torch_lproduct_gpu.json,
# torch_encoder_gpu.json, python_device.log (the Python package's CUDA tests), the training throughput of ltransformer_text's Std and T4 on the GPU beside PyTorch's
# standard model (throughput.log), test_mpi_np<P>.log (the distributed tests at 1, 2, 4 and 16 ranks) and
# bench_mpi_np<P>.json (the distributed product, slab product, transform and L-SVD at 1, 2, 4, 8 and 16 ranks, one
# thread per rank, strong scaling at 1024×1024×16 (the L-SVD at 512×512×16) and weak at 512·P×512×16).
#
# With --mpi it packs the MPI part alone (no CUDA program is built): the scaling run on a machine without a GPU, or
# a check of the packing here (`bash .gpu-bundle/run.sh OUT --quick` runs it on this machine's two cores).
#
# With --papers it packs instead the papers' experiments at their scale: bin/ltransformer_text and bin/tcp_vit
# (--papers=NAME,... for some of them), their data (data/spam-assassin.tgz, built by scripts/make-text-corpus.sh;
# Debian's Fashion-MNIST files) and the same run.sh, which then trains paper 000 §6 (20 epochs, 3 seeds) and paper
# 001's 10k-subset protocol (150 epochs, batch 256, peak lr 0.01, 3 seeds) side by side on the GPU and returns
# papers-results.tgz (logs, summaries; plot them here with build/examples/plot_training_log) and, for a run cut off by
# its deadline, <example>-state.tgz: put that file in a folder and name it in TPROD_GPU_RESUME for the next bundle,
# whose run continues from it (--resume).
#
# Usage: scripts/gpu-bundle.sh [--papers[=ltransformer_text,tcp_vit] | --mpi]   (prints the bundle's path last)
# Settings (environment): TPROD_GPU_BUILD_DIR (default build-gpu), TPROD_GPU_BUNDLE (default .gpu-bundle; the
# carry path must then name it), TPROD_JOBS (parallel compile jobs, default 2), TPROD_GPU_CXX_FLAGS (host
# compiler flags, default none: the x86-64 baseline), TPROD_GPU_CMAKE_ARGS (more configure options, split on
# spaces), CUDACXX (nvcc, default /usr/local/cuda/bin/nvcc); with --papers, TPROD_TEXT_DATA (the text corpus,
# default build/data/spam-assassin, built when missing) and TPROD_GPU_RESUME (a folder of <example>-state.tgz files
# that an earlier cut-off run returned).
set -euo pipefail

papers=0
mpi_only=0
paper_examples=(ltransformer_text tcp_vit)  # the examples --papers knows (their data and run.sh's commands)
examples=()
for arg in "$@"; do
  case "$arg" in
    --papers) papers=1 examples=("${paper_examples[@]}") ;;
    --papers=*)
      papers=1
      IFS=, read -r -a examples <<<"${arg#--papers=}"
      for e in "${examples[@]}"; do
        [[ " ${paper_examples[*]} " == *" $e "* ]] || { echo "gpu-bundle: --papers: no example '$e'" >&2; exit 2; }
      done ;;
    --mpi) mpi_only=1 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "gpu-bundle: unknown argument $arg (see --help)" >&2; exit 2 ;;
  esac
done

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo_root"
build_dir=${TPROD_GPU_BUILD_DIR:-build-gpu}
bundle=${TPROD_GPU_BUNDLE:-.gpu-bundle}
jobs=${TPROD_JOBS:-2}
nvcc=${CUDACXX:-/usr/local/cuda/bin/nvcc}
max_bytes=$((64 * 1024 * 1024))  # what the device tool carries

fail() {
  echo "gpu-bundle: $*" >&2
  exit 1
}
[[ -x "$nvcc" ]] || fail "nvcc not found at $nvcc (set CUDACXX): the CUDA toolkit is needed to build the bundle"
for tool in cmake ldd strip du; do
  command -v "$tool" >/dev/null || fail "$tool not found"
done

# The Debian packages the build needs (quick when they are all there).
bash "$repo_root/scripts/install-deps.sh"

# Configure: the CUDA backend for sm_90 (H100, H200), Release, portable host code. TPROD_NATIVE_ARCH=OFF takes
# -march=native off both the project's programs (tprod_project_options) and tprod::instances, which follow the
# same option (src/instances/CMakeLists.txt).
extra_args=()
if [[ -n "${TPROD_GPU_CMAKE_ARGS:-}" ]]; then
  read -r -a extra_args <<<"$TPROD_GPU_CMAKE_ARGS"
fi
cmake -S "$repo_root" -B "$build_dir" \
  -DCMAKE_BUILD_TYPE=Release \
  -DTPROD_ENABLE_CUDA=ON "-DCMAKE_CUDA_COMPILER=$nvcc" -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DTPROD_BUILD_TESTS=ON -DTPROD_BUILD_BENCHMARKS=ON -DTPROD_BUILD_EXAMPLES=ON -DTPROD_BUILD_TOOLS=OFF \
  -DTPROD_ENABLE_MPI=$( ((papers)) && echo OFF || echo ON) \
  -DTPROD_BUILD_PYTHON=$( ((papers || mpi_only)) && echo OFF || echo ON) -DPython3_EXECUTABLE=/usr/bin/python3 \
  -DTPROD_UNITY_BUILD=ON -DTPROD_DEVICE_TEST_SCALARS=all \
  -DTPROD_NATIVE_ARCH=OFF "-DCMAKE_CXX_FLAGS=${TPROD_GPU_CXX_FLAGS:-}" \
  "${extra_args[@]}"
text_data=${TPROD_TEXT_DATA:-$repo_root/build/data/spam-assassin}
fashion=/usr/share/datasets/fashion-mnist
if ((papers)); then
  bins=("${examples[@]/#/$build_dir/examples/}")
  if [[ " ${examples[*]} " == *" ltransformer_text "* ]]; then
    bash "$repo_root/scripts/make-text-corpus.sh" "$text_data" >/dev/null
  fi
  if [[ " ${examples[*]} " == *" tcp_vit "* && ! -f "$fashion/train-images-idx3-ubyte.gz" ]]; then
    fail "Fashion-MNIST is not in $fashion (Debian: dataset-fashion-mnist)"
  fi
elif ((mpi_only)); then
  bins=("$build_dir/tests/mpi/test_mpi" "$build_dir/bench/mpi/bench_mpi")
else
  bins=("$build_dir/tests/cuda/test_cuda" "$build_dir/bench/cuda/bench_cuda" "$build_dir/examples/ltransformer_text"
    "$build_dir/tests/mpi/test_mpi" "$build_dir/bench/mpi/bench_mpi")
fi
python_targets=()
((papers || mpi_only)) || python_targets=(tprod_python)
cmake --build "$build_dir" --target "${bins[@]##*/}" ${python_targets[@]+"${python_targets[@]}"} -j"$jobs"
for bin in "${bins[@]}"; do
  [[ -x "$bin" ]] || fail "$bin was not built"
done

# Pack.
rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib/fallback"
bundle=$(cd "$bundle" && pwd)
cp "${bins[@]}" "$bundle/bin/"
strip --strip-unneeded "$bundle"/bin/*

# Open MPI's runtime, where the MPI programs travel: mpirun, Open MPI's components (dlopened from its pkglibdir)
# and PMIx's, their help files and parameters. run.sh points Open MPI and PMIx at them (OPAL_PREFIX, OPAL_PKGLIBDIR,
# PMIX_PKGLIBDIR, ...); the libraries all of them load go to lib/ with the programs' below.
components=()
if [[ -x "$bundle/bin/bench_mpi" ]]; then
  command -v mpirun >/dev/null && command -v ompi_info >/dev/null || fail "mpirun or ompi_info not found (Open MPI)"
  ompi_path() { ompi_info --path "$1" --parsable | sed -n "s/^path:$1://p"; }
  ompi_pkglib=$(ompi_path pkglibdir)
  pmix_lib=$(ldd "$ompi_pkglib"/*.so | awk '$1 ~ /^libpmix/ { print $3 }' | sort -u)  # PMIx's own folder
  [[ -n "$pmix_lib" ]] || fail "no Open MPI component links PMIx (libpmix)"
  pmix_lib=$(dirname "$(readlink -f "${pmix_lib%%$'\n'*}")")
  mkdir -p "$bundle/openmpi/lib/openmpi3" "$bundle/openmpi/lib/pmix" "$bundle/openmpi/share" "$bundle/openmpi/etc"
  cp -L "$(readlink -f "$(command -v mpirun)")" "$bundle/bin/mpirun"
  cp "$ompi_pkglib"/*.so "$bundle/openmpi/lib/openmpi3/"
  cp "$pmix_lib"/pmix/*.so "$bundle/openmpi/lib/pmix/"
  cp -r "$(ompi_path pkgdatadir)" "$bundle/openmpi/share/openmpi"
  [[ -d "$pmix_lib/../share/pmix" ]] && cp -r "$pmix_lib/../share/pmix" "$bundle/openmpi/share/pmix"
  cp "$(ompi_path sysconfdir)"/*.conf "$bundle/openmpi/etc/" 2>/dev/null || true
  strip --strip-unneeded "$bundle/bin/mpirun" "$bundle"/openmpi/lib/*/*.so
  components=("$bundle"/openmpi/lib/*/*.so)
fi

# The Python package: the extension module (its libraries travel with the programs') and its CUDA tests.
if ((${#python_targets[@]})); then
  mkdir -p "$bundle/python/tests"
  cp -r "$build_dir/python/tprod" "$bundle/python/"
  rm -rf "$bundle/python/tprod/__pycache__"
  compgen -G "$bundle/python/tprod/_tprod*.so" >/dev/null || fail "the build left no _tprod*.so in $build_dir/python/tprod"
  strip --strip-unneeded "$bundle"/python/tprod/_tprod*.so
  cp python/tests/test_device.py python/tests/conftest.py "$bundle/python/tests/"
  /usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' >"$bundle/python/version"
  components+=("$bundle"/python/tprod/_tprod*.so)
fi

# The shared libraries: ldd lists every one loaded, transitively, with the path it resolves to here. The GPU
# machine has its own C library (glibc's parts and the loader), its CUDA libraries (driver, runtime, cuBLAS,
# cuRAND, ...) and a C++ runtime; everything else travels. The C++ runtime travels too, as a fallback for a
# machine whose own is older than this compiler's.
ldd_out=$(ldd "$bundle"/bin/* ${components[@]+"${components[@]}"})
if grep -q "not found" <<<"$ldd_out"; then
  echo "$ldd_out" >&2
  fail "a library the programs need is not found on this machine"
fi
while read -r name path; do
  case "$name" in
    linux-vdso* | ld-linux* | libc.so* | libm.so* | libmvec.so* | libpthread.so* | libdl.so* | librt.so* | \
      libutil.so* | libresolv.so* | libanl.so* | libnsl.so* | libcrypt.so*)
      ;;  # the C library: the GPU machine's own
    libcuda.so* | libcudart.so* | libcublas.so* | libcublasLt.so* | libcurand.so* | libcusolver*.so* | \
      libcufft*.so* | libcusparse.so* | libnvJitLink.so* | libnvrtc*.so*)
      ;;  # CUDA: the GPU machine's own (/usr/local/cuda/lib64)
    libstdc++.so* | libgcc_s.so*)
      cp -L "$path" "$bundle/lib/fallback/$name" ;;
    *)
      cp -L "$path" "$bundle/lib/$name" ;;
  esac
done < <(awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' <<<"$ldd_out" | sort -u)
chmod u+w "$bundle"/lib/*.so* "$bundle"/lib/fallback/*.so* 2>/dev/null || true
strip --strip-unneeded "$bundle"/lib/*.so* "$bundle"/lib/fallback/*.so* 2>/dev/null || true

if ((papers)); then
  # The data: the text corpus packed (it is many small files), Fashion-MNIST's four files as Debian installs them,
  # and the training states of an earlier run that its deadline cut off.
  printf '%s\n' "${examples[@]}" >"$bundle/papers"  # what run.sh trains
  mkdir -p "$bundle/data"
  for e in "${examples[@]}"; do
    case "$e" in
      ltransformer_text)
        tar czf "$bundle/data/spam-assassin.tgz" -C "$(dirname "$text_data")" "$(basename "$text_data")" ;;
      tcp_vit) mkdir -p "$bundle/data/fashion-mnist" && cp "$fashion"/*-ubyte.gz "$bundle/data/fashion-mnist/" ;;
    esac
  done
  if [[ -n "${TPROD_GPU_RESUME:-}" ]]; then  # the states of the bundled examples only (they are large)
    mkdir -p "$bundle/resume"
    for e in "${examples[@]}"; do
      [[ -f "$TPROD_GPU_RESUME/$e-state.tgz" ]] && cp "$TPROD_GPU_RESUME/$e-state.tgz" "$bundle/resume/"
    done
    compgen -G "$bundle/resume/*-state.tgz" >/dev/null ||
      fail "no state of ${examples[*]} (<example>-state.tgz) in $TPROD_GPU_RESUME"
  fi
else
  ((mpi_only)) || cp bench/peers/torch_lproduct_gpu.py bench/peers/torch_encoder_gpu.py bench/peers/ltransformer_text.py "$bundle/"
fi

cat >"$bundle/run.sh" <<'RUN'
#!/usr/bin/env bash
# Runs what scripts/gpu-bundle.sh packed on this GPU machine: tprod's CUDA tests, bench_cuda and the PyTorch
# peers, or (a bundle made with --papers) the papers' experiments at their scale.
# Usage: bash run.sh [OUT_DIR] [--quick] [--filter=REGEX] [--deadline=SECONDS] [--smoke] [--ranks=LIST]
#   OUT_DIR  where the results go (default: $OUT if set, else ./gpu-results): gpu-run.log (everything printed),
#            test_cuda.log, bench_cuda.json, torch_lproduct_gpu.json, torch_encoder_gpu.json, throughput.log,
#            python_device.log,
#            test_mpi_np<P>.log, bench_mpi_np<P>.json; papers: papers-results.tgz and <example>-state.tgz for an
#            example its deadline cut off
#   --quick  the tests, the benchmark's s256 cases, the peer's S = 256 and 50 throughput steps only; MPI: the tests
#            and bench_mpi's smoke cases at 1 and 2 ranks
#   --ranks=LIST  MPI: the rank counts of the scaling run (default 1,2,4,8,16; the tests run at 1, 2, 4 and the
#            largest)
#   --filter=REGEX  only the benchmark cases matching REGEX (Google Benchmark's --benchmark_filter)
#   --sanitize  also compute-sanitizer (where the machine has it): memcheck over the whole device test program,
#            racecheck and synccheck over the attention, embedding, LayerNorm and reduction cases; each tool's log
#            in sanitizer-<tool>.log and its error count in the summary (sanitizer.txt); --sanitize-only skips the rest
#   --deadline=SECONDS  papers: the training's wall-clock limit (default 480); a run cut off resumes later
#   --smoke  papers: tiny runs on the CPU, to check the script on a machine without a GPU (not the papers' runs)
# Every step runs even when an earlier one failed; the exit status is 0 only when all passed, 77 when the only
# problem is that no GPU is usable (the programs' "skipped"), 1 otherwise.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

quick=0
filter=""
out=""
deadline=480
smoke=0
ranks_list=1,2,4,8,16
sanitize=0
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    --sanitize) sanitize=1 ;;
    --sanitize-only) sanitize=2 ;;
    --filter=*) filter=${arg#--filter=} ;;
    --deadline=*) deadline=${arg#--deadline=} ;;
    --smoke) smoke=1 ;;
    --ranks=*) ranks_list=${arg#--ranks=} ;;
    -h | --help) sed -n '2,22p' "$0"; exit 0 ;;
    -*) echo "run.sh: unknown option $arg" >&2; exit 2 ;;
    *) out=$arg ;;
  esac
done
out=${out:-${OUT:-./gpu-results}}
mkdir -p "$out" || { echo "run.sh: cannot create $out" >&2; exit 2; }
out=$(cd "$out" && pwd)
log="$out/gpu-run.log"

main() {
  failures=()
  others=0  # failures other than "no GPU"
  note_failure() { failures+=("$1"); echo "run.sh: FAILED: $1"; }
  other_failure() { note_failure "$1"; others=$((others + 1)); }
  stamp() { date -u +%H:%M:%S; }

  echo "run.sh: $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(hostname), bundle $here, results in $out$( ((quick)) && echo ', --quick')"
  echo "system: $(uname -srm); $(ldd --version 2>/dev/null | head -n 1)"

  # The libraries: the bundle's own, then CUDA's (the toolkit's, else any that a pip-installed CUDA, e.g.
  # PyTorch's nvidia-* wheels, brought along). Only the two programs get this path; python3 runs as it is.
  libpath="$here/lib"
  cuda_dirs=(/usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib)
  [[ -n "${CUDA_HOME:-}" ]] && cuda_dirs=("$CUDA_HOME/lib64" "${cuda_dirs[@]}")
  for d in "${cuda_dirs[@]}"; do
    [[ -d "$d" && ":$libpath:" != *":$d:"* ]] && libpath="$libpath:$d"
  done
  if command -v python3 >/dev/null; then
    while read -r site; do
      for d in "$site"/nvidia/*/lib; do
        [[ -d "$d" ]] && compgen -G "$d/lib*.so*" >/dev/null && libpath="$libpath:$d"
      done
    done < <(python3 -c 'import site, sys; print("\n".join(site.getsitepackages() + [site.getusersitepackages()] + sys.path))' 2>/dev/null | sort -u)
  fi
  # Last, what the machine already sets (a container's driver library, say).
  libpath="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  programs=("$here"/bin/*)
  libs_ok=1
  if command -v ldd >/dev/null; then
    missing=$(LD_LIBRARY_PATH="$libpath" ldd "${programs[@]}" 2>&1 | grep "not found")
    if grep -qE "libstdc\+\+|libgcc_s|GLIBCXX|CXXABI|GCC_" <<<"$missing"; then
      echo "libraries: this machine's C++ runtime is older than the bundle's compiler's: using lib/fallback"
      libpath="$libpath:$here/lib/fallback"
      missing=$(LD_LIBRARY_PATH="$libpath" ldd "${programs[@]}" 2>&1 | grep "not found")
    fi
    if [[ -n "$missing" ]]; then
      echo "$missing"
      other_failure "libraries: some are not found (above); the CUDA 13 libraries belong in /usr/local/cuda/lib64"
      libs_ok=0
    fi
    echo "libraries (LD_LIBRARY_PATH=$libpath):"
    LD_LIBRARY_PATH="$libpath" ldd "${programs[0]}" 2>&1 | grep -E "cuda|cublas|curand|stdc\+\+|fftw|gomp|benchmark" |
      sed 's/^/  /'
  else
    echo "libraries: ldd not found; running without checking"
  fi

  echo "== $(stamp) nvidia-smi -L"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi -L || echo "run.sh: nvidia-smi found no GPU"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>/dev/null
  else
    echo "run.sh: nvidia-smi not found"
  fi

  # run_step NAME COMMAND...: runs a step, records its failure (77: no GPU) and goes on.
  run_step() {
    local name=$1 start rc
    shift
    echo "== $(stamp) $name: $*"
    start=$SECONDS
    "$@"
    rc=$?
    echo "== $(stamp) $name: exit $rc after $((SECONDS - start)) s"
    if ((rc == 77)); then
      note_failure "$name: no GPU (exit 77: no CUDA device is usable here)"
    elif ((rc != 0)); then
      other_failure "$name (exit $rc)"
    fi
  }
  run_test() {
    LD_LIBRARY_PATH="$libpath" "$here/bin/test_cuda" >"$out/test_cuda.log" 2>&1
    local rc=$?
    tail -n 30 "$out/test_cuda.log"
    return $rc
  }
  # compute-sanitizer over test_cuda: memcheck on every case, racecheck and synccheck (shared memory and
  # __syncthreads) on the cases whose kernels use them. "ERROR SUMMARY: N errors" is the count reported.
  run_sanitizer() {
    local tool_bin rc=0 tool cases summary
    tool_bin=$(command -v compute-sanitizer || true)
    [[ -z "$tool_bin" && -x /usr/local/cuda/bin/compute-sanitizer ]] && tool_bin=/usr/local/cuda/bin/compute-sanitizer
    if [[ -z "$tool_bin" ]]; then
      echo "run.sh: compute-sanitizer not found on this machine: the sanitizer step is skipped" | tee "$out/sanitizer.txt"
      return 0
    fi
    : >"$out/sanitizer.txt"
    for tool in memcheck racecheck synccheck; do
      cases=()
      [[ $tool != memcheck ]] && cases=("--test-case=*attention*,*MHA*,*embedding*,*LayerNorm*,*norms*,*AdamW*")
      LD_LIBRARY_PATH="$libpath" "$tool_bin" --tool "$tool" --error-exitcode 99 --print-limit 20 \
        "$here/bin/test_cuda" ${cases[@]+"${cases[@]}"} >"$out/sanitizer-$tool.log" 2>&1
      local status=$?
      summary=$(grep -E "ERROR SUMMARY" "$out/sanitizer-$tool.log" | tail -n 1)
      echo "$tool: ${summary:-no summary} (exit $status)" | tee -a "$out/sanitizer.txt"
      ((status != 0)) && rc=1
    done
    return $rc
  }
  run_bench() {
    local select=()
    ((quick)) && select=(--benchmark_filter=s256)
    [[ -n "$filter" ]] && select=("--benchmark_filter=$filter")
    LD_LIBRARY_PATH="$libpath" "$here/bin/bench_cuda" --benchmark_out="$out/bench_cuda.json" \
      --benchmark_out_format=json --benchmark_repetitions=5 --benchmark_report_aggregates_only=true ${select[@]+"${select[@]}"}
  }
  run_peer() {
    local q=()
    ((quick)) && q=(--quick)
    # The machine's own Python and PyTorch, without the bundle's libraries on the path.
    python3 "$here/torch_lproduct_gpu.py" --json "$out/torch_lproduct_gpu.json" ${q[@]+"${q[@]}"}
  }
  run_encoder_peer() {
    python3 "$here/torch_encoder_gpu.py" --json "$out/torch_encoder_gpu.json"
  }
  # Training throughput on random tokens (paper 000's IMDB shape: d = 128, H = 4, d_ff = 512, 4 layers, T = 128,
  # batch 32): tprod's Std and T4 on the GPU, then PyTorch's standard model on the same GPU.
  throughput_steps=200
  ((quick)) && throughput_steps=50
  run_throughput() {
    LD_LIBRARY_PATH="$libpath" "$here/bin/ltransformer_text" --throughput "$throughput_steps" --models std,t4 \
      --device cuda --out "$out/ltransformer_text" 2>&1 | tee -a "$out/throughput.log"
    return "${PIPESTATUS[0]}"
  }
  # The Python package's CUDA tests, on the machine's Python and PyTorch when its version is the package's.
  run_python_tests() {
    local want have
    want=$(cat "$here/python/version")
    have=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    if [[ "$have" != "$want" ]]; then
      echo "run.sh: python_device skipped: this machine's Python is $have, the package was built for $want" |
        tee "$out/python_device.log"
      return 0
    fi
    if ! python3 -c 'import pytest, torch' 2>/dev/null; then
      echo "run.sh: python_device skipped: this machine's Python lacks pytest or torch" | tee "$out/python_device.log"
      return 0
    fi
    PYTHONPATH="$here/python" LD_LIBRARY_PATH="$libpath" python3 -m pytest -q -rs -p no:cacheprovider \
      "$here/python/tests/test_device.py" >"$out/python_device.log" 2>&1
    local rc=$?
    tail -n 30 "$out/python_device.log"
    return $rc
  }
  run_throughput_peer() {
    python3 "$here/ltransformer_text.py" --device cuda --steps "$throughput_steps" 2>&1 | tee -a "$out/throughput.log"
    return "${PIPESTATUS[0]}"
  }

  # The MPI programs on this machine's cores, with the bundle's Open MPI (relocated: its components, PMIx's and the
  # help files are found through these variables, not at the paths they were installed at), shared memory between
  # the ranks, one thread per rank, each rank bound to a core where there are enough.
  mpi_env=(OPAL_PREFIX="$here/openmpi" OPAL_LIBDIR="$here/lib" OPAL_PKGLIBDIR="$here/openmpi/lib/openmpi3"
    OPAL_PKGDATADIR="$here/openmpi/share/openmpi" OPAL_SYSCONFDIR="$here/openmpi/etc" PMIX_PREFIX="$here/openmpi"
    PMIX_PKGLIBDIR="$here/openmpi/lib/pmix" PMIX_PKGDATADIR="$here/openmpi/share/pmix" LD_LIBRARY_PATH="$libpath"
    OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_backing_directory=/tmp
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1)
  mpi_run() {  # mpi_run P PROGRAM ARGS...: at most 10 minutes
    local np=$1 place=(--bind-to core --map-by core)
    shift
    ((np > $(nproc))) && place=(--oversubscribe --bind-to none)
    timeout 600 env "${mpi_env[@]}" "$here/bin/mpirun" -np "$np" "${place[@]}" -x OMP_NUM_THREADS -x LD_LIBRARY_PATH "$@"
  }
  IFS=, read -r -a mpi_ranks <<<"$ranks_list"
  ((quick)) && mpi_ranks=(1 2)
  run_mpi_tests() {
    local np rc=0
    for np in $(printf '%s\n' 1 2 4 "${mpi_ranks[-1]}" | sort -nu); do
      ((quick && np > 2)) && continue
      echo "test_mpi at $np ranks"
      mpi_run "$np" "$here/bin/test_mpi" >"$out/test_mpi_np$np.log" 2>&1 || rc=1
      tail -n 3 "$out/test_mpi_np$np.log"
    done
    return $rc
  }
  run_mpi_scaling() {
    # Strong scaling at 1024×1024×16 (the L-SVD at 512×512×16, 16 slice SVDs of 1024² being long on one rank), weak
    # at 512·P×512×16.
    local np rc=0 select='mpi/(product|slab_product|transform)/(s1024_p16|weak_s512_p16)/|mpi/svd/(s512|weak_s512)_p16/'
    ((quick)) && select='mpi/(product|slab_product|transform|svd)/smoke/'
    for np in "${mpi_ranks[@]}"; do
      echo "bench_mpi at $np ranks"
      mpi_run "$np" "$here/bin/bench_mpi" "--benchmark_filter=$select" --benchmark_repetitions=3 \
        --benchmark_report_aggregates_only=true --benchmark_out="$out/bench_mpi_np$np.json" \
        --benchmark_out_format=json 2>&1 | grep -E "median|error|rror" || rc=1
    done
    return $rc
  }

  # The papers' experiments at their scale, the bundle's examples at once on the GPU (each a chain of small kernels
  # that leaves most of it idle): paper 000 §6 (Std, T4, Std-1L; 20 epochs as for IMDB, 3 seeds) on the text
  # corpus, paper 001's subsampled protocol (10,000 training and 2,000 test images, 150 epochs, batch 256, peak lr
  # 0.01, 3 seeds) on Fashion-MNIST. The folders stay outside OUT (checkpoints and states are large); the logs,
  # summaries and plots come back packed, with the training states of an example the deadline cut off.
  run_papers() {
    local work=/tmp/tprod-papers rc=0 name examples
    mapfile -t examples <"$here/papers"
    rm -rf "$work" && mkdir -p "$work/data" "$work/out" || return 1
    if [[ -f "$here/data/spam-assassin.tgz" ]]; then
      tar xzf "$here/data/spam-assassin.tgz" -C "$work/data" || return 1
    fi
    for state in "$here"/resume/*-state.tgz; do
      [[ -f "$state" ]] || continue
      name=${state##*/}
      name=${name%-state.tgz}
      mkdir -p "$work/out/$name" && tar xzf "$state" -C "$work/out/$name" || return 1
      echo "papers: continuing $name from $state"
    done
    local text=(--data "$work/data/spam-assassin" --epochs 20 --seeds 3 --device cuda)
    local vit=(--data "$here/data/fashion-mnist" --train 10000 --test 2000 --epochs 150 --batch 256 --lr 0.01
      --seeds 3 --device cuda)
    if ((smoke)); then
      text=(--data "$work/data/spam-assassin" --epochs 2 --seeds 2 --train-docs 300 --test-docs 100 --width 32
        --layers 1 --max-length 32 --device cpu)
      vit=(--data "$here/data/fashion-mnist" --train 300 --test 100 --epochs 2 --seeds 2 --device cpu)
    fi
    local -A pid
    for name in "${examples[@]}"; do
      local args
      [[ $name == tcp_vit ]] && args=("${vit[@]}") || args=("${text[@]}")
      LD_LIBRARY_PATH="$libpath" timeout "$deadline" "$here/bin/$name" "${args[@]}" --resume --threads 8 \
        --out "$work/out/$name" --summary "$work/out/$name/summary.json" >"$work/out/$name.log" 2>&1 &
      pid[$name]=$!
    done
    for name in "${examples[@]}"; do
      local status
      wait "${pid[$name]}"
      status=$?
      echo "papers: $name exit $status$( ((status == 124)) && echo ' (cut off by the deadline: its state comes back)')"
      tail -n 12 "$work/out/$name.log"
      if ((status == 124)); then
        tar czf "$out/$name-state.tgz" -C "$work/out/$name" state || rc=1
      elif ((status != 0)); then
        rc=$status
      fi
    done
    tar czf "$out/papers-results.tgz" -C "$work/out" --exclude=state --exclude=checkpoints . || rc=1
    return $rc
  }

  if ((libs_ok)) && [[ -f "$here/papers" ]]; then
    run_step papers run_papers
  elif ((libs_ok)); then
    if [[ -x "$here/bin/test_cuda" ]] && ((sanitize == 2)); then
      run_step compute_sanitizer run_sanitizer
    elif [[ -x "$here/bin/test_cuda" ]]; then
      run_step test_cuda run_test
      ((sanitize)) && run_step compute_sanitizer run_sanitizer
      run_step bench_cuda run_bench
      run_step ltransformer_text_throughput run_throughput
    fi
    if [[ -x "$here/bin/bench_mpi" ]] && ((sanitize != 2)); then
      run_step test_mpi run_mpi_tests
      run_step bench_mpi_scaling run_mpi_scaling
    fi
  else
    other_failure "the programs not run (libraries missing)"
  fi
  if [[ -f "$here/papers" || ! -x "$here/bin/test_cuda" ]] || ((sanitize == 2)); then
    :  # the papers' and the MPI bundles have no peers
  elif command -v python3 >/dev/null; then
    run_step torch_lproduct_gpu run_peer
    run_step torch_encoder_gpu run_encoder_peer
    run_step torch_ltransformer_text_gpu run_throughput_peer
    [[ -f "$here/python/version" ]] && run_step python_device run_python_tests
  else
    other_failure "torch_lproduct_gpu: python3 not found"
  fi

  if ((${#failures[@]} == 0)); then
    echo "run.sh: all steps passed; results in $out"
    exit 0
  fi
  echo "run.sh: ${#failures[@]} problem(s):"
  printf '  %s\n' "${failures[@]}"
  if ((others == 0)); then
    echo "run.sh: no GPU: no CUDA device is usable on this machine (see nvidia-smi above); results in $out"
    exit 77
  fi
  echo "run.sh: results in $out"
  exit 1
}

# Everything printed also goes to the log (which comes back with the results).
main 2>&1 | tee "$log"
exit "${PIPESTATUS[0]}"
RUN
chmod +x "$bundle/run.sh"
((papers || mpi_only)) || chmod +x "$bundle"/*.py

# The device tool carries 64 MiB at most.
size=$(du -sb "$bundle" | cut -f1)
echo "gpu-bundle: $(du -sh "$bundle" | cut -f1) ($size bytes):"
(cd "$bundle" && find . -type f -printf '  %p %s\n' | sort)
((size <= max_bytes)) || fail "the bundle is $size bytes, over the device tool's 64 MiB"
echo "gpu-bundle: on the GPU machine: run with carry [\"${bundle#"$repo_root"/}\"] and the command: bash ${bundle#"$repo_root"/}/run.sh \"\$OUT\""
echo "$bundle"
