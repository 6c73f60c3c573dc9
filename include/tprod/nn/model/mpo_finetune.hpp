// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file mpo_finetune.hpp
/// @brief Over-parameterized fine-tuning with matrix product operators (paper 003's over-parameterization
/// framework): chosen dense weight matrices of a trained model are replaced, for fine-tuning only, by exact MPOs
/// (more parameters, the same function), their cores are trained, and the product of the cores is merged back
/// into the dense matrix, so inference costs what it did before.
///
/// **The exact MPO.** A matrix W ∈ ℝ^{I×J} with I = Π I_n, J = Π J_n becomes cores 𝒢_n ∈ ℝ^{R_{n−1}×I_n×J_n×R_n}
/// by TT-SVD at full ranks (tprod::mpo_from_matrix with tolerance 0), R_n = rank of the n-th unfolding, at most
/// min(Π_{k≤n} I_kJ_k, Π_{k>n} I_kJ_k); then W = merge(𝒢) = 𝒢_1⋯𝒢_N up to rounding. The cores hold
/// Σ_n R_{n−1}I_nJ_nR_n ≥ IJ entries for most shapes: the over-parameterization.
///
/// **Factorization rule** (mpo_factorization_for, overridable): I and J are each split into N factors as equal
/// as possible — prime factors from the largest, each multiplied into the factor with the smallest product so
/// far (the first on ties) — so that the merged modes I_nJ_n are balanced and the bond ranks large. N = 3 by
/// default; a size with fewer than N prime factors gets factors 1.
///
/// **Training.** The model stays dense. mpo_overparameterized wraps it as a layer: its forward writes
/// W = merge(𝒢) into the model (as the MPO layer's forward with X = I_I, which also saves what the backward
/// needs) and runs the model; its backward runs the model's backward, which leaves ∂L/∂W in the model's gradient,
/// and turns it into the cores' gradients by the MPO layer's backward with dY = ∂L/∂W (since W = I_I·W), then
/// clears ∂L/∂W. Its parameters are the model's without the over-parameterized W, followed by the cores
/// ("<W's name>.core_<n>", each as an (R_{n−1}I_n)×(J_nR_n)×1 tensor), so any optimizer of the composition API
/// (nn::parameters, nn::step) trains the cores and the rest of the model together. The merge and the cores'
/// gradients cost the MPO layer's forward and backward passes on I rows per matrix and step, independent of the
/// batch (measured 4–16 % of a training step in examples/mpo_finetune's model). The model may live in any memory
/// space: with a device model the cores and their gradients live on the device too, the merge and the cores'
/// gradients are the MPO layer's passes there (mpo_linear_params_in, on an identity matrix kept there), and only the
/// exact MPO of each matrix is made on the host, once, from a copy of W.
///
/// **Importance** of a weight matrix (the score I_W the framework ranks by). Paper 003's text refers to the
/// equation of I_W without printing it; tprod uses the first-order Taylor sensitivity of the loss to the matrix,
/// the estimate of the loss change when W is removed, accumulated over the batches b = 1…K seen:
///   I_W = Σ_b Σ_{i,j} |w_ij · ∂L_b/∂w_ij|.
/// Matrices are divided into groups by module — the name with its layer numbers replaced by '*'
/// ("encoder.*.attn.w_qkv", "encoder.*.ffn.w1", "head.weight") — and ranked by I_W within each group.
///
/// **Strategies** (paper 003, Algorithm "Fine-tuning a Language Model"):
///   - static: fine-tune the dense model, compute I_W, over-parameterize the top-N of every group
///     (select_top(scores, N)), and fine-tune again;
///   - dynamic: S = {}; while |S ∩ group| < N for some group: train t steps, compute I_W over those steps (of
///     dense_weight_matrices()), add the top-n matrices of every group not yet in S (select_next(scores, S, N, n))
///     and over-parameterize them;
///     then keep training. Adding matrices changes the parameter list, so an optimizer is rebuilt after each round.
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "tprod/nn/model/layer.hpp"
#include "tprod/nn/mpo_linear.hpp"

namespace tprod::nn {

/// @brief The factorizations I = Π row_dims, J = Π col_dims of one weight matrix.
struct mpo_factorization {
  nd_shape row_dims, col_dims;
};

/// @brief `size` as `order` factors as equal as possible (the rule in the file comment), e.g. 64 → (4, 4, 4),
/// 192 → (6, 8, 4), 2 → (2, 1, 1).
/// @throws shape_error when size or order is zero.
inline nd_shape balanced_factors(std::size_t size, std::size_t order) {
  TPROD_EXPECTS(size > 0 && order > 0, "nn::balanced_factors: size " + std::to_string(size) + " and order " +
                                           std::to_string(order) + " must be positive");
  std::vector<std::size_t> primes;
  for (std::size_t p = 2, rest = size; rest > 1; ++p) {
    if (p * p > rest) p = rest;  // what is left is prime
    for (; rest % p == 0; rest /= p) primes.push_back(p);
  }
  nd_shape factors(order, 1);
  for (auto p = primes.rbegin(); p != primes.rend(); ++p) *std::min_element(factors.begin(), factors.end()) *= *p;
  return factors;
}

/// @brief The default factorization of an I×J matrix into `order` cores (balanced_factors of each side).
inline mpo_factorization mpo_factorization_for(std::size_t rows, std::size_t cols, std::size_t order = 3) {
  return {balanced_factors(rows, order), balanced_factors(cols, order)};
}

/// @brief The module group of a parameter: its name with every all-digit component replaced by '*'
/// ("encoder.1.ffn.w1" → "encoder.*.ffn.w1").
inline std::string module_group(std::string_view name) {
  std::string group;
  std::size_t start = 0;
  while (start <= name.size()) {
    const std::size_t end = std::min(name.find('.', start), name.size());
    const std::string_view part = name.substr(start, end - start);
    const bool number = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (start > 0) group += '.';
    group += number ? std::string_view("*") : part;
    start = end + 1;
  }
  return group;
}

/// @brief Σ_{i,j} |w_ij · g_ij|, one batch's term of I_W, in double, where the tensors live.
/// @throws shape_error when w and g differ in size.
template <std::floating_point T, memory_space S>
double sensitivity(const tensor3<T, dextents3, S>& w, const tensor3<T, dextents3, S>& g) {
  TPROD_EXPECTS(w.size() == g.size(), "nn::sensitivity: weight " + w.shape() + " and gradient " + g.shape());
  using view = tensor3_view<const T, dextents3, S>;
  return weight_sensitivity(tprod::detail::system_of<S>(), view(w.data(), w.size(), 1, 1),
                            view(g.data(), g.size(), 1, 1));
}

namespace detail {
/// The value and gradient tensors of parameter `name` of a layer, or a shape_error listing what the layer has.
template <std::floating_point T, layer<T> M>
std::pair<layer_tensor<M, T>*, layer_tensor<M, T>*> find_parameter(M& model, const std::string& name,
                                                                   const char* where) {
  std::pair<layer_tensor<M, T>*, layer_tensor<M, T>*> found{nullptr, nullptr};
  std::string known;
  model.for_each_parameter([&](std::string_view n, layer_tensor<M, T>& v, layer_tensor<M, T>& g) {
    if (n == name) found = {&v, &g};
    known += (known.empty() ? "" : ", ") + std::string(n);
  });
  TPROD_EXPECTS(found.first != nullptr,
                std::string(where) + ": the model has no parameter '" + name + "' (it has: " + known + ")");
  TPROD_EXPECTS(found.first->p() == 1, std::string(where) + ": '" + name + "' is " + found.first->shape() +
                                           ", a weight over p > 1 slices; MPO over-parameterization takes the p = 1 "
                                           "matrices of a standard model");
  return found;
}
}  // namespace detail

/// @brief The names of a model's weight matrices: its p = 1 parameters with at least two rows and two columns
/// (biases and LayerNorm gains are 1×d), in visiting order. The caller may drop some (an embedding table).
template <std::floating_point T, layer<T> M>
std::vector<std::string> weight_matrix_names(M& model) {
  std::vector<std::string> names;
  model.for_each_parameter([&](std::string_view n, layer_tensor<M, T>& v, layer_tensor<M, T>&) {
    if (v.p() == 1 && v.m() > 1 && v.n() > 1) names.emplace_back(n);
  });
  return names;
}

/// @brief I_W of chosen weight matrices of a model in memory space S, accumulated batch by batch: call accumulate()
/// after each backward pass (before the gradients are cleared).
template <std::floating_point T, memory_space S = host_space>
class importance_meter {
 public:
  /// @throws shape_error naming an unknown parameter or one over p > 1 slices.
  template <layer<T> M>
    requires std::same_as<layer_space_t<M>, S>
  importance_meter(M& model, const std::vector<std::string>& names) {
    for (const auto& n : names) {
      const auto [v, g] = detail::find_parameter<T>(model, n, "nn::importance_meter");
      entries_.push_back({n, v, g});
      scores_[n] = 0;
    }
  }

  /// I_W += Σ|w ⊙ ∂L/∂w| of the current gradients, for every matrix.
  void accumulate() {
    for (const auto& e : entries_) scores_[e.name] += sensitivity(*e.value, *e.grad);
  }
  void reset() {
    for (auto& [name, s] : scores_) s = 0;
  }
  const std::map<std::string, double>& scores() const { return scores_; }

 private:
  struct entry {
    std::string name;
    const tensor3<T, dextents3, S>* value;
    const tensor3<T, dextents3, S>* grad;
  };
  std::vector<entry> entries_;
  std::map<std::string, double> scores_;
};

/// @brief Dynamic selection: of every module group, the `at_once` (n) highest-scoring matrices not yet in
/// `selected`, without taking a group past `total` (N) selected matrices (`selected` may hold matrices that are not
/// scored any more). Ties go to the name first in order.
/// Static selection is select_next(scores, {}, N, N).
inline std::vector<std::string> select_next(const std::map<std::string, double>& scores,
                                            const std::set<std::string>& selected, std::size_t total,
                                            std::size_t at_once) {
  std::map<std::string, std::vector<std::pair<double, std::string>>> groups;
  std::map<std::string, std::size_t> taken;
  for (const auto& name : selected) ++taken[module_group(name)];
  for (const auto& [name, score] : scores)
    if (!selected.contains(name)) groups[module_group(name)].emplace_back(score, name);
  std::vector<std::string> chosen;
  for (auto& [group, members] : groups) {
    std::stable_sort(members.begin(), members.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    const std::size_t room = total > taken[group] ? total - taken[group] : 0;
    for (std::size_t i = 0; i < std::min({room, at_once, members.size()}); ++i) chosen.push_back(members[i].second);
  }
  return chosen;
}

/// @brief Static selection: the top `per_group` matrices of every module group by I_W.
inline std::vector<std::string> select_top(const std::map<std::string, double>& scores, std::size_t per_group) {
  return select_next(scores, {}, per_group, per_group);
}

/// @brief A dense model with some of its weight matrices trained as exact MPOs (see the file comment); itself a
/// layer, in the model's memory space. It refers to `model`, which must outlive it; the over-parameterized matrices
/// of the model are overwritten by merge(𝒢) at every forward pass, so they are not to be changed directly.
template <std::floating_point T, layer<T> M>
class mpo_overparameterized {
  using S = layer_space_t<M>;
  static constexpr bool on_host = std::same_as<S, host_space>;

 public:
  using memory_space_type = S;
  using tensor = tensor3<T, dextents3, S>;
  std::string name;  ///< the model's: parameter names are the model's ("encoder.0.attn.w_qkv.core_1")

  explicit mpo_overparameterized(M& model) : name(model.name), model_(&model) {}

  /// @brief Replaces weight matrix `parameter` (I×J×1) by its exact MPO with the given factorization (default:
  /// mpo_factorization_for(I, J, order), order 3 when not given).
  /// @throws shape_error for an unknown name, a weight over p > 1 slices, one already over-parameterized,
  ///         factorizations that do not multiply to I and J, or both `dims` and an `order` they do not have.
  void over_parameterize(const std::string& parameter, const std::optional<mpo_factorization>& dims = {},
                         std::optional<std::size_t> order = {}) {
    constexpr const char* where = "nn::mpo_overparameterized::over_parameterize";
    TPROD_EXPECTS(!contains(parameter), std::string(where) + ": '" + parameter + "' is already an MPO");
    auto e = std::make_unique<entry>();
    e->name = parameter;
    std::tie(e->value, e->grad) = detail::find_parameter<T>(*model_, parameter, where);
    const std::size_t rows = e->value->m(), cols = e->value->n();
    TPROD_EXPECTS(!dims || !order || dims->row_dims.size() == *order,
                  std::string(where) + ": the factorization given for '" + parameter + "' has " +
                      std::to_string(dims ? dims->row_dims.size() : 0) + " cores, but order " +
                      std::to_string(order.value_or(0)) + " was asked for: give one of the two");
    const mpo_factorization f = dims ? *dims : mpo_factorization_for(rows, cols, order.value_or(3));
    TPROD_EXPECTS(!f.row_dims.empty() && f.row_dims.size() == f.col_dims.size() &&
                      tprod::detail::product(f.row_dims) == rows && tprod::detail::product(f.col_dims) == cols,
                  std::string(where) + ": '" + parameter + "' is " + e->value->shape() + ", which does not factor as (" +
                      tprod::shape_string(f.row_dims) + ") x (" + tprod::shape_string(f.col_dims) +
                      ") with as many row as column factors");
    const tensor3<T> w = tprod::detail::in_space<host_space>(*e->value);  // the exact MPO is made on the host
    e->cores = mpo_linear_from_dense<T>(dense_matrix<T>(w.slice(0)), f.row_dims, f.col_dims);
    for (const auto& c : e->cores.weight.cores) {
      const auto s = c.shape();
      tensor3<T> value(s[0] * s[1], s[2] * s[3], 1);
      std::copy(c.data(), c.data() + c.size(), value.data());
      e->core_values.push_back(tprod::detail::in_space<S>(std::move(value)));
      e->core_grads.emplace_back(s[0] * s[1], s[2] * s[3], 1);
    }
    if constexpr (!on_host) {  // X = I_I for the merge's MPO pass
      tensor3<T> identity(rows, rows, 1);
      identity.slice(0).setIdentity();
      e->identity = tprod::detail::in_space<S>(std::move(identity));
    }
    entries_.push_back(std::move(e));
  }

  bool contains(const std::string& parameter) const {
    return std::any_of(entries_.begin(), entries_.end(), [&](const auto& e) { return e->name == parameter; });
  }
  /// The over-parameterized matrices, in the order they were added.
  std::vector<std::string> over_parameterized() const {
    std::vector<std::string> names;
    for (const auto& e : entries_) names.push_back(e->name);
    return names;
  }
  /// The model's weight matrices (weight_matrix_names) not over-parameterized yet: the dynamic strategy's candidates
  /// (weight_matrix_names of this wrapper would list the cores too).
  std::vector<std::string> dense_weight_matrices() {
    std::vector<std::string> names = weight_matrix_names<T>(*model_);
    std::erase_if(names, [&](const std::string& n) { return contains(n); });
    return names;
  }
  /// The current MPO of an over-parameterized matrix (on the host). @throws shape_error for another name.
  const mpo<T>& weight(const std::string& parameter) {
    for (const auto& e : entries_)
      if (e->name == parameter) return host_cores(*e).weight;
    throw shape_error("nn::mpo_overparameterized::weight: '" + parameter + "' is not over-parameterized");
  }
  /// Σ of the cores' entries over all over-parameterized matrices.
  std::size_t core_parameter_count() const {
    std::size_t n = 0;
    for (const auto& e : entries_) n += e->cores.parameter_count();
    return n;
  }

  /// @brief W ← merge(𝒢) for every over-parameterized matrix, and the model, ready for inference or a checkpoint.
  M& merged() {
    merge();
    return *model_;
  }

  const tensor& forward(const tensor& x, const batch& b) {
    merge();  // the cores may have changed since (an optimizer step, a finite difference): cheap next to the model
    return model_->forward(x, b);
  }

  /// The model's backward, then ∂L/∂𝒢_n (added into the cores' gradients) from ∂L/∂W, which is cleared.
  const tensor& backward(const tensor& dy) {
    const tensor& dx = model_->backward(dy);
    const auto sys = tprod::detail::system_of<S>();
    for (auto& e : entries_) {
      if constexpr (on_host) {
        const auto g = mpo_linear_backward<T>(e->cores, e->saved, e->grad->slice(0));
        for (std::size_t n = 0; n < e->core_grads.size(); ++n)
          e->core_grads[n].elements() += tprod::detail::elements(g.d_params.weight.cores[n]);
      } else {
        const auto g = mpo_linear_backward(e->cores_in, e->saved_in, *e->grad);
        for (std::size_t n = 0; n < e->core_grads.size(); ++n) {
          tensor& grad = e->core_grads[n];
          axpy(sys, T(1), g.d_params.weight.cores[n].flat(),
               tensor3_view<T, dextents3, S>(grad.data(), grad.size(), 1, 1));
        }
      }
      fill(sys, e->grad->view(), T(0));
    }
    return dx;
  }

  /// The model's parameters except the over-parameterized matrices, then every matrix's cores.
  template <class F>
  void for_each_parameter(F&& f) {
    model_->for_each_parameter([&](std::string_view n, tensor& v, tensor& g) {
      if (!contains(std::string(n))) f(n, v, g);
    });
    for (auto& e : entries_)
      for (std::size_t n = 0; n < e->core_values.size(); ++n)
        f(e->name + ".core_" + std::to_string(n), e->core_values[n], e->core_grads[n]);
  }

 private:
  struct entry {
    std::string name;
    tensor* value = nullptr;     // W in the model
    tensor* grad = nullptr;      // ∂L/∂W in the model
    mpo_linear_params<T> cores;  // the MPO layer's weight on the host, loaded from core_values before use
    std::vector<tensor> core_values, core_grads;  // what an optimizer trains (stable addresses)
    mpo_linear_saved<T> saved;   // the host's merge: its forward state, for the backward
    dense_matrix<T> merged;
    mpo_linear_params_in<T, S> cores_in;  // outside the host: the cores, the identity and the merge's state in S
    mpo_linear_saved_in<T, S> saved_in;
    tensor identity, merged_in;
  };

  /// The host cores with the values an optimizer last wrote.
  static mpo_linear_params<T>& host_cores(entry& e) {
    for (std::size_t n = 0; n < e.core_values.size(); ++n) {
      if constexpr (on_host) {
        tprod::detail::elements(e.cores.weight.cores[n]) = e.core_values[n].elements();
      } else {
        const tensor3<T> v = tprod::detail::in_space<host_space>(e.core_values[n]);
        std::copy(v.data(), v.data() + v.size(), e.cores.weight.cores[n].data());
      }
    }
    return e.cores;
  }

  void merge() {
    for (auto& e : entries_) {
      if constexpr (on_host) {
        const std::size_t rows = e->value->m();
        mpo_linear_forward<T>(host_cores(*e), dense_matrix<T>::Identity(Eigen::Index(rows), Eigen::Index(rows)),
                              e->merged, e->saved);
        e->value->slice(0) = e->merged;
      } else {
        e->cores_in.weight.cores.resize(e->core_values.size());
        for (std::size_t n = 0; n < e->core_values.size(); ++n)
          e->cores_in.weight.cores[n] = ndtensor_in<T, S>(shape_of(e->cores.weight.cores[n]), e->core_values[n]);
        mpo_linear_forward(e->cores_in, e->identity, e->merged_in, e->saved_in);
        copy(tprod::detail::system_of<S>(), cview(e->merged_in), e->value->view());
      }
    }
  }

  M* model_;
  std::vector<std::unique_ptr<entry>> entries_;  // on the heap: the optimizer holds the cores' addresses
};

}  // namespace tprod::nn
