// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file model_parallel.hpp
/// @brief Spectral model-parallel training of the L-Transformer. In the transform domain an encoder whose LayerNorms
/// are paper 001's transform-domain ones (Def. 5.5) and whose attention is paper 000's spectral L-MHA is p
/// independent sub-encoders, one per slice (paper 000, Thm. 19). Each rank owns a block of the slices with their
/// parameters (attention, FFN, LayerNorms) and runs only those; every rank holds the layers around the encoder
/// (embedding, positions, dropout, pooling, head) and runs them on the whole batch.
///
/// With M = Zᵀ and N = Z⁻ᵀ (Â = A·M and A = Â·N on the (B·T·d_s)×p matrix of tubes) and r's slices K_r:
///   forward:   X̂_r = X·M_{:,K_r}           local: the encoder's input X is on every rank
///              Ŷ_r = encoder_r(X̂_r)        local: r's sub-encoders, under the identity transform
///              Y   = Σ_r Ŷ_r·N_{K_r,:}      one MPI_Allreduce of B·T·d values
///   backward:  dŶ_r = dY·N_{K_r,:}ᵀ,  dX̂_r = encoder_rᵀ(dŶ_r),  dX = Σ_r dX̂_r·M_{:,K_r}ᵀ   (one MPI_Allreduce)
/// The summed activations are the same on every rank, so the layers every rank holds compute the same gradients
/// everywhere and exchange nothing: the embedding's gradient (V·d values) is never sent, only the B·T·d activation
/// gradient it is computed from. Layers that mix the slices need more (docs/distributed.md): the original-domain
/// LayerNorm (paper 000's Def. 17) two all-to-alls per sublayer, the t-Softmax attention one per attention; this
/// layer refuses them.
#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tprod/distributed/communicator.hpp"
#include "tprod/distributed/data_parallel.hpp"
#include "tprod/distributed/partition.hpp"
#include "tprod/nn/model/classifier.hpp"

namespace tprod::distributed {

/// @brief An encoder stack spread over the ranks of a communicator by transform-domain slices (see the file
/// comment): a layer of nn's composition API, a drop-in for nn::encoder_stack<T, L> in a model.
template <std::floating_point T, nn::real_transform<T> L>
class spectral_encoder_stack {
 public:
  using memory_space_type = host_space;
  using tensor = tprod::tensor3<T>;  // not distributed::tensor3: the activations are whole on every rank
  using local_stack = nn::encoder_stack<T, identity_transform>;  ///< this rank's sub-encoders
  std::string name = "encoder";

  /// @brief Collective: rank r keeps the slices block_partition(p, P) gives it, taken from `whole` (the same
  /// one-process stack on every rank, e.g. built from the same seed), and the layers' name.
  /// @throws distributed_error on every rank when the ranks' stacks differ in shape, or a layer mixes the slices
  /// (original-domain LayerNorm, t-Softmax or dimension-wise attention) or trains its transform.
  spectral_encoder_stack(const communicator& comm, nn::encoder_stack<T, L> whole)
      : name(whole.name), comm_(comm), slices_(whole[0].config.slices, comm.size()), width_(whole[0].config.width) {
    static_assert(!nn::trained_transform<L, T>,
                  "tprod::distributed::spectral_encoder_stack: a learned transform couples every slice's gradient; "
                  "train it data-parallel");
    collectively(comm_, [&] {
      for (std::size_t i = 0; i < whole.size(); ++i) {
        const auto& cfg = whole[i].config;
        const std::string layer = "distributed::spectral_encoder_stack: layer " + std::to_string(i);
        TPROD_EXPECTS(cfg.norm == nn::layer_norm_kind::transform_domain,
                      layer +
                          " normalizes in the original domain, which mixes the slices at every sublayer: "
                          "use the transform-domain LayerNorm, or train the model data-parallel");
        TPROD_EXPECTS(cfg.attention == nn::attention_variant::spectral,
                      layer + " has " +
                          (cfg.attention == nn::attention_variant::t_softmax ? "t-Softmax" : "dimension-wise") +
                          " attention; only the spectral L-MHA runs slice by slice here");
      }
    });
    check_same({whole.size(), width_, slices_.count()}, "the encoders' layers, widths or slices");
    const std::size_t p = slices_.count(), first = slices_.begin(comm_.rank()), mine = slices_.size(comm_.rank());
    if (mine == 0) return;  // more ranks than slices: this rank only takes part in the sums
    std::vector<nn::encoder_params<T, identity_transform>> layers;
    for (std::size_t i = 0; i < whole.size(); ++i) layers.push_back(slices_of(whole[i], first, mine));
    stack_.emplace(std::move(layers), name);
    stack_->causal = whole.causal;  // the causal mask acts on every slice's attention alike: it splits with them
    const auto& m = *whole.transform().template forward_factor<T>(p);
    const auto& n = *whole.transform().template inverse_factor<T>(p);
    to_slices_ = m.middleCols(first, mine).transpose();    // X̂_r = X·M_{:,K_r}
    from_slices_ = n.middleRows(first, mine).transpose();  // Y += Ŷ_r·N_{K_r,:}
    to_slices_adjoint_ = n.middleRows(first, mine);        // dŶ_r = dY·N_{K_r,:}ᵀ
    from_slices_adjoint_ = m.middleCols(first, mine);      // dX += dX̂_r·M_{:,K_r}ᵀ
  }

  /// @brief Collective: the encoder's output on every rank, for the input every rank holds.
  /// @throws distributed_error on every rank when the ranks' inputs differ in shape or the layers refuse it.
  const tensor& forward(const tensor& x, const nn::batch& b) {
    across_slices(x, to_slices_, from_slices_, y_,
                  [&](const tensor& x_hat) -> const tensor& { return stack_->forward(x_hat, b); });
    return y_;
  }

  /// @brief Collective: d𝒳 on every rank; this rank's parameter gradients added.
  const tensor& backward(const tensor& dy) {
    across_slices(dy, to_slices_adjoint_, from_slices_adjoint_, dx_,
                  [&](const tensor& dy_hat) -> const tensor& { return stack_->backward(dy_hat); });
    return dx_;
  }

  /// f(name, value, gradient) for this rank's parameters only ("encoder.0.attn.w_qkv" …, its slices).
  template <class F>
  void for_each_parameter(F&& f) {
    if (stack_) stack_->for_each_parameter(f);
  }

  /// The slices' partition; this rank's are [slices().begin(rank), slices().end(rank)).
  const block_partition& slices() const { return slices_; }
  /// This rank's sub-encoders (none on a rank without slices).
  const std::optional<local_stack>& local() const { return stack_; }
  /// Values this rank has summed over the ranks so far (the payload of the all-reduces, in T).
  std::size_t values_communicated() const { return communicated_; }

 private:
  /// Layer `whole`'s slices [first, first + count) as a layer of `count` slices under the identity transform:
  /// its parameters live in the transform domain, so they are the same numbers.
  static nn::encoder_params<T, identity_transform> slices_of(nn::encoder_params<T, L> whole, std::size_t first,
                                                             std::size_t count) {
    nn::layer_config cfg = whole.config;
    cfg.slices = count;
    auto part = nn::make_encoder_params<T>(cfg, identity_transform{}, 0);
    std::vector<tensor*> from;
    whole.for_each([&](std::string_view, tensor& t) { from.push_back(&t); });
    std::size_t i = 0;
    part.for_each([&](std::string_view, tensor& t) {
      for (std::size_t k = 0; k < count; ++k) t.slice(k) = from[i]->slice(first + k);
      ++i;
    });
    return part;
  }

  /// out = Σ_r local(in ×₃ into)×₃ back, on every rank: the local part inside `collectively`, then the sum.
  template <class Local>
  void across_slices(const tensor& in, const tprod::detail::dense_matrix<T>& into,
                     const tprod::detail::dense_matrix<T>& back, tensor& out, Local&& local) {
    check_same({in.m(), in.n(), in.p()}, "the encoder's input shapes");
    collectively(comm_, [&] {
      TPROD_EXPECTS(in.n() == width_ && in.p() == slices_.count(),
                    "distributed::spectral_encoder_stack: input " + in.shape() +
                        " does not match the encoder (rows x " + std::to_string(width_) + " x " +
                        std::to_string(slices_.count()) + ")");
      nn::detail::ensure_shape(out, in.m(), in.n(), in.p());
      const auto sys = tprod::detail::system_of<host_space>();
      if (!stack_) {
        fill(sys, out.dynamic_view(), T(0));
        return;
      }
      nn::detail::ensure_shape(hat_, in.m(), in.n(), slices_.size(comm_.rank()));
      multiply_mode(sys, 2, cview(in), into, hat_.view());
      multiply_mode(sys, 2, cview(local(std::as_const(hat_))), back, out.view());
    });
    TPROD_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, out.data(), mpi_int(out.size(), "activations"), mpi_type<T>(), MPI_SUM,
                                  comm_.get()));
    communicated_ += out.size();
  }

  /// @throws distributed_error on every rank unless the three counts are the same on every rank.
  void check_same(const std::array<unsigned long long, 3>& counts, const char* what) const {
    const auto r = range_over_ranks<3>(comm_, counts);
    for (std::size_t i = 0; i < 3; ++i)
      if (r.low[i] != r.high[i])
        throw distributed_error(std::string("distributed::spectral_encoder_stack: ") + what +
                                " differ across the ranks (" + std::to_string(r.low[i]) + " to " +
                                std::to_string(r.high[i]) + ")");
  }

  communicator comm_;
  block_partition slices_;
  std::size_t width_;
  std::optional<local_stack> stack_;
  tprod::detail::dense_matrix<T> to_slices_, from_slices_, to_slices_adjoint_, from_slices_adjoint_;
  tensor hat_, y_, dx_;
  std::size_t communicated_ = 0;
};

/// The text classifier of nn::make_text_classifier with its encoder spread over the ranks by slices.
template <std::floating_point T, nn::real_transform<T> L>
using spectral_text_classifier =
    nn::sequential<T, nn::token_embedding<T>, nn::positional_layer<T, nn::sinusoidal_positional_params<T>>,
                   nn::dropout<T>, spectral_encoder_stack<T, L>, nn::pooling_layer<T>, nn::flatten_layer<T>,
                   nn::linear_layer<T, identity_transform>>;

/// @brief Collective: nn::make_text_classifier(c, layers) — the same initial values on every rank as in one
/// process — with the encoder spread over comm's ranks by slices. The layers must keep the slices apart: the
/// transform-domain LayerNorm (cfg.norm = layer_norm_kind::transform_domain) and the spectral attention.
/// @throws distributed_error on every rank for layers that mix the slices; what make_text_classifier throws.
template <std::floating_point T, nn::real_transform<T> L>
spectral_text_classifier<T, L> make_spectral_text_classifier(const communicator& comm,
                                                             const nn::text_classifier_config& c,
                                                             std::vector<nn::encoder_params<T, L>> layers) {
  auto whole = nn::make_text_classifier<T>(c, std::move(layers));
  return spectral_text_classifier<T, L>(
      std::move(whole.template get<0>()), std::move(whole.template get<1>()), std::move(whole.template get<2>()),
      spectral_encoder_stack<T, L>(comm, std::move(whole.template get<3>())), std::move(whole.template get<4>()),
      std::move(whole.template get<5>()), std::move(whole.template get<6>()));
}

/// @brief nn::fit's model-parallel form on comm (fit_options::distribution): every rank runs every batch, the
/// parameters named "<sharded_prefix>…" (a spectral encoder's) are this rank's own, and the gradient norm for
/// clipping is summed over the ranks. Rank 0 prints; every rank writes its own training state.
inline nn::fit_distribution model_parallel(const communicator& comm, std::string sharded_prefix = "encoder.") {
  return {comm.rank(), comm.size(), false, sum_over(comm),
          [prefix = std::move(sharded_prefix)](std::string_view n) { return n.starts_with(prefix); }};
}

}  // namespace tprod::distributed
