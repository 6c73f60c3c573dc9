// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file raw.hpp
/// @brief The compiled side of the CUDA backend: functions on raw device pointers, defined in src/cuda/*.cu and
/// instantiated there for the four scalars (float, double, std::complex<float>, std::complex<double>).
///
/// Why a raw layer: the headers users compile with their host compiler do the shape logic and the transform
/// policies (host code, Eigen), and call these few functions; nvcc compiles only kernels and library calls, never
/// Eigen or the algebra's templates (so the device build stays small and fast to compile). Every function
/// enqueues on `stream`; those returning host values synchronize it. All throw tprod::cuda_error on failure.
#include <cuda_runtime_api.h>

#include <complex>
#include <cstddef>
#include <memory>
#include <string>

#include "tprod/backend/kernels/attention_blocks.hpp"
#include "tprod/backend/kernels/nn_kinds.hpp"

namespace tprod::backend::cuda::raw {

template <class T> struct real_of { using type = T; };
template <class R> struct real_of<std::complex<R>> { using type = R; };
template <class T> using real_of_t = typename real_of<T>::type;

// Devices and memory (src/cuda/runtime.cu).
int device_count();
std::string no_device_reason();  ///< cudaGetDeviceCount's error when device_count() is 0, else empty
void* allocate(std::size_t bytes, cudaStream_t stream);      ///< stream-ordered (cudaMallocAsync); nullptr for 0
void deallocate(void* ptr, cudaStream_t stream) noexcept;    ///< cudaFreeAsync on the allocating stream
enum class direction { host_to_device, device_to_host, device_to_device };
void copy_bytes(void* dst, const void* src, std::size_t bytes, direction dir, cudaStream_t stream);
/// @brief `count` device-to-device copies of `block_bytes` each, from src + i·src_stride to dst + i·dst_stride.
void copy_blocks(void* dst, std::size_t dst_stride, const void* src, std::size_t src_stride, std::size_t block_bytes,
                 std::size_t count, cudaStream_t stream);
void synchronize(cudaStream_t stream);
/// @brief A device copy of a column-major rows×cols host matrix (a transform's cached factor), or of its transpose,
/// cached while `owner` lives: keyed by the host address, which `owner` keeps alive, so a key is never reused for
/// other data.
const void* device_matrix(const void* host, std::size_t rows, std::size_t cols, std::size_t scalar_bytes,
                          bool transposed, std::shared_ptr<const void> owner);

// Elementwise and reductions (src/cuda/elementwise.cu).
template <class T> void fill(T* x, std::size_t n, T value, cudaStream_t stream);
template <class U, class T> void convert(const U* x, T* y, std::size_t n, cudaStream_t stream);  ///< T == U or complex<U>
template <class T> void real_part(const std::complex<T>* x, T* y, std::size_t n, cudaStream_t stream);
template <class T> void axpy(T alpha, const T* x, T* y, std::size_t n, cudaStream_t stream);
template <class T> void scale(T alpha, T* x, std::size_t n, cudaStream_t stream);
template <class T> bool all_finite(const T* x, std::size_t n, cudaStream_t stream);
/// @brief Σ_i |x_i|² of each of `count` consecutive blocks of `block` elements, in double, into host memory.
template <class T> void block_squared_norms(const T* x, std::size_t block, std::size_t count, double* out, cudaStream_t stream);
/// @brief Σ_i conj(x_i)·y_i of each block (accumulated in double precision), into host memory.
template <class T> void block_dots(const T* x, const T* y, std::size_t block, std::size_t count, T* out, cudaStream_t stream);
/// @brief at(:, :, k) = a(:, :, k)ᴴ for the p slices of an m×n×p tensor.
template <class T> void adjoint_slices(const T* a, T* at, std::size_t m, std::size_t n, std::size_t p, cudaStream_t stream);
/// @brief x(:, :, k) = I (m×n) for every slice.
template <class T> void identity_slices(T* x, std::size_t m, std::size_t n, std::size_t p, cudaStream_t stream);
/// @brief y = x with its modes reordered: x column-major of `shape` (host array of `order`), y's mode k is x's mode
/// perm[k] (host array); `total` elements; at most max_permuted_modes modes (src/cuda/elementwise.cu).
inline constexpr std::size_t max_permuted_modes = 16;
template <class T>
void permute_modes(const T* x, const std::size_t* shape, const std::size_t* perm, std::size_t order, T* y,
                   std::size_t total, cudaStream_t stream);
/// @brief Uniform i.i.d. entries in [−1, 1] (both parts when complex) from cuRAND's Philox generator.
template <class T> void random_uniform(T* x, std::size_t n, unsigned long long seed, cudaStream_t stream);

// GEMMs (src/cuda/gemm.cu). Column-major; `tf32` lets float GEMMs use TF32 tensor cores.
/// @brief C = A·B for (rows×k)·(k×cols), leading dimensions lda, ldb, ldc.
template <class T>
void gemm(std::size_t rows, std::size_t cols, std::size_t k, const T* a, std::size_t lda, const T* b, std::size_t ldb,
          T* c, std::size_t ldc, bool tf32, cudaStream_t stream);
/// @brief C = A·B for B given as its transpose bt (cols×k, leading dimension ldbt): cuBLAS's (N, T) GEMM, which
/// cuBLAS runs faster than (N, N) on the transforms' tall (m·n)×p by p×p shapes (docs/performance.md).
template <class T>
void gemm_bt(std::size_t rows, std::size_t cols, std::size_t k, const T* a, std::size_t lda, const T* bt,
             std::size_t ldbt, T* c, std::size_t ldc, bool tf32, cudaStream_t stream);
/// @brief C_s = A_s·B_s for the `batch` slices of (m×l)·(l×n), slice strides m·l, l·n, m·n (one strided-batched GEMM).
template <class T>
void gemm_strided_batched(std::size_t m, std::size_t n, std::size_t l, std::size_t batch, const T* a, const T* b, T* c,
                          bool tf32, cudaStream_t stream);
/// @brief The same with the slices' strides given: C_s = A_s·B_s with A_s = a + s·stride_a, B_s = b + s·stride_b
/// (0: one B shared by every slice), C_s = c + s·stride_c; leading dimensions m, l, m.
template <class T>
void gemm_strided_batched(std::size_t m, std::size_t n, std::size_t l, std::size_t batch, const T* a,
                          std::size_t stride_a, const T* b, std::size_t stride_b, T* c, std::size_t stride_c, bool tf32,
                          cudaStream_t stream);

/// @brief The general form, for the nn's slice-linear maps: C_s = op(A_s)·op(B_s) + β·C_s for the `batch` slices,
/// op(A_s) m×k, op(B_s) k×n (transposed when trans_a, trans_b), leading dimensions and slice strides given (stride
/// 0: one operand shared by every slice); β ∈ {0, 1} (1 adds to C).
template <class T>
void gemm_strided_batched(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, std::size_t batch,
                          const T* a, std::size_t lda, std::size_t stride_a, const T* b, std::size_t ldb,
                          std::size_t stride_b, T beta, T* c, std::size_t ldc, std::size_t stride_c, bool tf32,
                          cudaStream_t stream);

/// @brief The blocks of one operand of a batched GEMM over (slice, head, sequence): block f = (s·heads + j)·batch + b
/// starts at base + s·slice + j·head + b·sequence (strides in elements).
template <class E>
struct block_grid {
  E* base;
  std::size_t slice, head, sequence;
};
/// @brief C_f = op(A_f)·op(B_f) (+ β·C_f) for the `count` blocks of three block grids over `heads` heads and `batch`
/// sequences (one cublasGemmBatchedEx call on pointer tables that a kernel writes on the device, so nothing is
/// copied from the host): op(A_f) m×k, op(B_f) k×n, leading dimensions shared; β ∈ {0, 1}.
template <class T>
void gemm_blocks(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, block_grid<const T> a,
                 std::size_t lda, block_grid<const T> b, std::size_t ldb, T beta, block_grid<T> c, std::size_t ldc,
                 std::size_t heads, std::size_t batch, std::size_t count, bool tf32, cudaStream_t stream);

// The nn layers' kernels, for float and double.
/// @brief The attention's column softmax (src/cuda/attention.cu) over `blocks` T_k×T_q blocks of probs, in place:
/// column t of block f (sequence f mod batch) keeps its first valid keys (causal: ≤ t + 1; key_lengths, a host
/// array of `batch` or nullptr: ≤ key_lengths[b]), softmax(scale·(s − max)) there and 0 beyond.
template <class T>
void attention_softmax(T* probs, std::size_t tk, std::size_t tq, std::size_t blocks, std::size_t batch, T scale,
                       bool causal, const std::size_t* key_lengths, cudaStream_t stream);
/// @brief dS = scale·P ⊙ (dP − 1·colsum(P ⊙ dP)) per column of the blocks, in place in dp.
template <class T>
void attention_softmax_backward(const T* probs, T* dp, std::size_t tk, std::size_t tq, std::size_t blocks, T scale,
                                cudaStream_t stream);
/// @brief The valid rows of the head columns of a (batch·seq)×width×p block of a tensor (src: leading dimension
/// ld, slice_stride elements per slice, columns col0 …), copied into the dense (batch·seq)×width×p tensor dst:
/// rows t < n_b of sequence b (n_b = key_lengths[b], a host array of `batch`, or seq when nullptr) kept, times
/// 1/√n_b when `scaled`, the rest 0 (src/cuda/attention.cu; dimension-wise attention).
template <class T>
void valid_rows(const T* src, std::size_t ld, std::size_t slice_stride, std::size_t col0, T* dst, std::size_t seq,
                std::size_t batch, std::size_t width, std::size_t p, const std::size_t* key_lengths, bool scaled,
                cudaStream_t stream);
/// @brief Additive attention's scores (src/cuda/attention.cu): P_f(k, t) = wᵀ tanh(Q_t + K_k) for every block f of
/// `d`, w the block's d_h entries of the 1×(h·d_h)×p score tensor, for the valid keys k of query t (causal: k ≤ t;
/// key_lengths, a host array of d.batch or nullptr: k < key_lengths[b]) and 0 beyond; the softmax follows apart.
template <class T>
void additive_scores(const kernels::attention_blocks& d, kernels::head_layout<const T> q,
                     kernels::head_layout<const T> k, const T* score, bool causal, const std::size_t* key_lengths,
                     T* probs, cudaStream_t stream);
/// @brief From dS (the softmax's backward pass, T_k×T_q per block): dQ_t = Σ_k dS(k, t) w ⊙ (1 − t_tk²) and
/// dK_k = Σ_t dS(k, t) w ⊙ (1 − t_tk²) over the valid pairs (assigned), and d_score (1×(h·d_h)×p, assigned) =
/// Σ_b Σ_{t,k} dS(k, t) t_tk, summed over the sequences in order.
template <class T>
void additive_score_gradients(const kernels::attention_blocks& d, kernels::head_layout<const T> q,
                              kernels::head_layout<const T> k, const T* score, bool causal,
                              const std::size_t* key_lengths, const T* ds, kernels::head_layout<T> dq,
                              kernels::head_layout<T> dk, T* d_score, cudaStream_t stream);
/// @brief TSA's graph (src/cuda/attention.cu) from the unscaled K_b·K_bᵀ of `batch` sequences of `steps` tokens in
/// `scores` (steps×steps×batch): psi_t_b(j, i) = Ω(i, j)·max(scale·scores_b(i, j), 0) for i ≠ j both below n_b
/// (key_lengths, a host array of `batch`, or nullptr: all steps), 0 elsewhere; then scores ← scale·scores.
template <class T>
void spectral_graph(T* scores, const T* omega, std::size_t steps, std::size_t batch, T scale,
                    const std::size_t* key_lengths, T* psi_t, cudaStream_t stream);
/// @brief d_scores_b = scale·(E_b + E_bᵀ), E_b(i, j) = Ω(i, j)·d_psi_b(i, j)·[scores_b(i, j) > 0] for i ≠ j both
/// below n_b, 0 elsewhere.
template <class T>
void spectral_graph_backward(const T* scores, const T* omega, const T* d_psi, std::size_t steps, std::size_t batch,
                             T scale, const std::size_t* key_lengths, T* d_scores, cudaStream_t stream);
/// @brief y = σ(x), dx = g ⊙ σ'(x), and y = σ(x) with x ← σ'(x), over n elements (src/cuda/activation.cu).
template <class T>
void activation_forward(kernels::activation a, const T* x, T* y, std::size_t n, cudaStream_t stream);
template <class T>
void activation_backward(kernels::activation a, const T* x, const T* g, T* dx, std::size_t n, cudaStream_t stream);
template <class T>
void activation_keep_derivative(kernels::activation a, T* x, T* y, std::size_t n, cudaStream_t stream);
/// @brief y ← y ⊙ f over n elements (src/cuda/activation.cu).
template <class T>
void multiply_elementwise(const T* f, T* y, std::size_t n, cudaStream_t stream);
/// @brief One tensor of a multi-tensor AdamW step: θ, g, m, v of `size` elements each (src/cuda/optimizer.cu).
template <class T>
struct adamw_pointers {
  T* param;
  const T* grad;
  T* m;
  T* v;
  std::size_t size;
};
/// @brief The AdamW update of every tensor in `slots` (a host array of `count`), in one launch.
template <class T>
void adamw_update(const adamw_pointers<T>* slots, std::size_t count, const kernels::adamw_coefficients<T>& c,
                  cudaStream_t stream);
/// @brief Σ_i ‖x_i‖²_F over `count` tensors (host arrays of their device pointers and sizes), in double, in one
/// launch; waits for the stream.
template <class T>
double squared_norm_total(const T* const* tensors, const std::size_t* sizes, std::size_t count, cudaStream_t stream);
/// @brief Σ_i |w_i·g_i| over n elements, in double (src/cuda/optimizer.cu: a Thrust reduction); waits for the stream.
template <class T>
double weight_sensitivity(const T* w, const T* g, std::size_t n, cudaStream_t stream);
/// @brief The token-embedding and loss tasks (src/cuda/embedding.cu; contract: backend/kernels/embedding.hpp), the
/// index lists in host memory: out (n×padded, column-major) = the table's columns `tokens` with zero padding
/// features; d_table(:, token) += the rows of d_out with that token; the softmax cross-entropy of batch×classes
/// logits into d_logits and predicted (host), returning the summed loss of the `counted` labelled rows.
template <class T>
void embedding_gather(const T* table, std::size_t d, const std::size_t* tokens, std::size_t n, T* out,
                      std::size_t padded, cudaStream_t stream);
template <class T>
void embedding_scatter_add(const std::size_t* tokens, std::size_t n, const T* d_out, std::size_t d, T* d_table,
                           cudaStream_t stream);
template <class T>
double softmax_cross_entropy(const T* logits, std::size_t batch, std::size_t classes, const std::size_t* labels,
                             std::size_t counted, T* d_logits, std::size_t* predicted, cudaStream_t stream);
/// @brief The tasks on batches of sequences (src/cuda/sequence.cu; contract: backend/kernels/sequence.hpp) on
/// tensors of n·p columns (a column is one (feature, slice) pair; in_rows and out_rows are the tensors' row counts):
/// copy_sequence_rows and sum_sequence_rows as the contract states with (stride, offset, count) triples,
/// mean_pool(_backward) with `lengths` a host array of `batch` values or nullptr (all rows valid), and
/// dropout_forward drawing from cuRAND's Philox stream (seed, subsequence pass).
template <class T>
void copy_sequence_rows(const T* in, std::size_t in_rows, std::size_t from_stride, std::size_t from_offset, T* out,
                        std::size_t out_rows, std::size_t to_stride, std::size_t to_offset, std::size_t count,
                        std::size_t batch, std::size_t columns, bool accumulate, cudaStream_t stream);
template <class T>
void sum_sequence_rows(const T* in, std::size_t in_rows, std::size_t from_stride, std::size_t from_offset,
                       std::size_t count, std::size_t batch, std::size_t columns, T* out, cudaStream_t stream);
template <class T>
void mean_pool(const T* x, std::size_t length, std::size_t batch, std::size_t columns, const std::size_t* lengths,
               T* out, cudaStream_t stream);
template <class T>
void mean_pool_backward(const T* d_out, std::size_t length, std::size_t batch, std::size_t columns,
                        const std::size_t* lengths, T* d_in, cudaStream_t stream);
template <class T>
void dropout_forward(unsigned long long seed, unsigned long long pass, double rate, const T* x, T* mask, T* out,
                     std::size_t n, cudaStream_t stream);
/// @brief LayerNorm over the n features of each (row, slice) of r×n×p tensors (src/cuda/layer_norm.cu), as the
/// contract's layer_norm_forward and layer_norm_backward state; coupling is nullptr for original_domain.
template <class T>
void layer_norm_forward(kernels::layer_norm_kind kind, T eps, const T* x, const T* gamma, const T* beta, T* y,
                        T* normalized, T* inv_scale, T* coupling, std::size_t r, std::size_t n, std::size_t p,
                        cudaStream_t stream);
template <class T>
void layer_norm_backward(const T* gamma, const T* normalized, const T* inv_scale, const T* coupling, const T* d_out,
                         T* d_in, T* d_gamma, T* d_beta, std::size_t r, std::size_t n, std::size_t p,
                         cudaStream_t stream);
/// @brief y(i, j, k) = b[j + b_slice_stride·k] for the rows×cols×p tensor y (src/cuda/slice_linear.cu): a row
/// vector per slice, repeated down every row (the bias a slice-linear GEMM then adds to).
template <class T>
void broadcast_rows(const T* b, std::size_t b_slice_stride, T* y, std::size_t rows, std::size_t cols, std::size_t p,
                    cudaStream_t stream);

// The tube transform's kernel (src/cuda/tube_transform.cu).
/// @brief Whether tube_transform takes a p×q factor of scalars of this size (small factors: the kernel keeps the
/// factor in shared memory and runs at copy bandwidth; larger ones go through gemm).
bool tube_kernel_applies(std::size_t p, std::size_t q, std::size_t factor_scalar_bytes);
/// @brief out (rows×q) = in (rows×p) · F (p×q), column-major, F on the device. The mixes: In = F = Out; complex
/// data with a real factor; real data with a complex factor (out complex); complex data and factor into real out
/// (the real part). Requires tube_kernel_applies(p, q, sizeof(F)).
template <class In, class F, class Out>
void tube_transform(const In* in, const F* factor, Out* out, std::size_t rows, std::size_t p, std::size_t q,
                    cudaStream_t stream);

// Slice factorizations (src/cuda/slice_factorization.cu).
/// @brief a(:, :, k) = u_k·diag(σ_k)·v_kᴴ for the q slices of an m×n×q tensor (src/cuda/slice_svd.cu): u m×ucols×q
/// and v n×vcols×q with ucols ∈ {min(m, n), m} and vcols ∈ {min(m, n), n} (economy or full), sigma (host) the
/// min(m, n)×q singular values, non-increasing per slice, and info (host) the status per slice (0: converged).
/// Up to 32×32 cuSOLVER's batched Jacobi; the economy form up to 256×256 tprod's batched one-sided Jacobi;
/// beyond, one cuSOLVER Jacobi SVD per slice.
template <class T>
void svd_slices(const T* a, std::size_t m, std::size_t n, std::size_t q, std::size_t ucols, std::size_t vcols, T* u,
                T* v, real_of_t<T>* sigma, int* info, cudaStream_t stream);
/// @brief svd_slices through cuSOLVER alone (batched up to 32×32, one gesvdj per slice beyond): the baseline that
/// the one-sided Jacobi is measured and tested against.
template <class T>
void svd_slices_cusolver(const T* a, std::size_t m, std::size_t n, std::size_t q, std::size_t ucols,
                         std::size_t vcols, T* u, T* v, real_of_t<T>* sigma, int* info, cudaStream_t stream);
/// @brief a(:, :, s) = q_s·r_s for the q slices of an m×n×q tensor (src/cuda/slice_qr.cu): qs m×c×q with
/// orthonormal columns, rs c×n×q upper triangular, c ∈ {min(m, n), m} (economy or full); info (host) cuSOLVER's
/// status per slice (0: success).
template <class T>
void qr_slices(const T* a, std::size_t m, std::size_t n, std::size_t q, std::size_t c, T* qs, T* rs, int* info,
               cudaStream_t stream);
/// @brief out(:, :, k) = a(:, :, k)⁻¹ for the p square m×m slices (batched LU); rconds[k] (host) =
/// 1/(‖a_k⁻¹‖₁·max_j ‖a_j‖₁), 0 where LU met a zero pivot.
template <class T>
void invert_slices(const T* a, T* out, std::size_t m, std::size_t p, double* rconds, cudaStream_t stream);

}  // namespace tprod::backend::cuda::raw
