// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file learned_transform.hpp
/// @brief learned_transform<T>: a transform whose matrix Z is trained with the model (the star-M idea of
/// learning M), kept orthogonal by a Cayley parameterisation around a fixed orthogonal Z₀ (the DCT by default):
///
///   Z = Q(S)·Z₀,   Q(S) = (I − A)(I + A)⁻¹,   A = S − Sᵀ,
///
/// with the p×p parameter S starting at 0, so that Z starts at Z₀. Q(S) is orthogonal for every S (A is skew, so
/// I + A is never singular), hence Z⁻¹ = Zᵀ, Z keeps condition number 1 and the transform keeps the norm
/// (norm_scale 1) whatever the optimizer does: no re-orthogonalisation step and no conditioning check are needed.
/// The price is that Q cannot reach a rotation with eigenvalue −1 (Q = −I, say) from S = 0; a layer that wanted
/// one would need S → ∞. Weight decay on S pulls Z back towards Z₀.
///
/// Gradient. Every pass of L or L⁻¹ a layer makes in a recorded forward pass keeps its original-domain value (the
/// input of L, the output of L⁻¹); in the backward pass, where the layer applies the adjoint, the gradient with
/// respect to Z of that pass is (the transform-domain gradient) × (that value)ᵀ over the tubes, with a minus for
/// L⁻¹ (algebra/z_gradient.hpp), and is carried through the Cayley map onto S:
///   G_Q = G_Z·Z₀ᵀ,   G_A = −(I + Q)ᵀ·G_Q·(I + A)⁻ᵀ,   G_S = G_A − G_Aᵀ.
/// The backward pass must take the passes in the reverse order of the forward pass (every layer of nn does); a
/// pass that does not match the last recorded one (kind or shape) is an error, never a wrong gradient.
///
/// Memory space. learned_transform<T, S> trains in the layers' space S: its parameter S (p×p×1) and gradient live
/// there, as the optimizer's other tensors do, and so do the values its passes record; Z itself is a p×p host
/// matrix, remade from a host copy of S when S has changed (on the device, each check copies the p² entries back
/// to the host), and each pass's gradient U_G·U_Vᵀ is one transpose and one GEMM where the tensors live
/// (algebra/z_gradient.hpp), its p×p result carried through the Cayley map on the host. A layer in another space
/// than its learned transform's fails to compile with a sentence saying so.
///
/// Use. Copies share one Z (a handle), so a model built with a learned_transform has one matrix, trained through
/// every layer. Every layer of the composition API that takes a transform (linear_layer, norm_layer,
/// attention_layer, encoder_stack, decoder_stack; model/transform_training.hpp) starts the recording at each
/// forward pass in the training phase, exposes S as the parameter `<layer>.transform.skew` and checks after its
/// backward pass that every recorded pass was taken. Several such layers may share one Z: each holds a
/// `pass_ticket`, the first layer of a forward pass starts a cycle and the others join it, and the check runs
/// when the last of them has finished its backward pass (`sequential` lists the shared S once). With the layer
/// functions alone, call begin_pass(true) before the forward pass and end_backward() after the backward pass,
/// and update S (skew(), skew_grad()) yourself. A pass's Z is re-made from S when S has changed, so an
/// optimizer step needs no call. Not thread-safe: one forward or backward pass at a time per transform.
#include <Eigen/LU>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tprod/algebra/z_gradient.hpp"
#include "tprod/core/error.hpp"
#include "tprod/core/tensor3.hpp"
#include "tprod/transform/dct.hpp"
#include "tprod/transform/matrix_transform.hpp"

namespace tprod::nn {

template <std::floating_point T, memory_space S = host_space>
class learned_transform {
  using base = matrix_transform<double>;
  using tensor = tensor3<T, dextents3, S>;

 public:
  using memory_space_type = S;  ///< where the layers it trains in, its parameter and its recorded values live
  template <scalar U> using original_scalar = typename base::template original_scalar<U>;
  template <scalar U> using domain_scalar = typename base::template domain_scalar<U>;
  static constexpr std::size_t static_size = dynamic_extent;
  static constexpr tube_algorithm algorithm = tube_algorithm::none;

  /// @brief Default: an unusable transform of size 0.
  learned_transform() = default;
  /// @brief Z₀ = the orthonormal DCT-II of size p.
  explicit learned_transform(std::size_t p) : learned_transform(dct_matrix(p)) {}
  /// @brief Around a given orthogonal Z₀.
  /// @throws shape_error unless Z₀ is square and non-empty; numerical_error unless Z₀ᵀZ₀ = I to 1e-12.
  explicit learned_transform(const Eigen::MatrixXd& z0) : state_(std::make_shared<state>(z0)) {}

  static constexpr std::string_view name() { return "learned"; }
  std::size_t size() const { return state_ ? std::size_t(state_->z0.rows()) : 0; }
  void check_size(std::size_t p) const { current().check_size(p); }
  template <scalar U> std::size_t stored_slices(std::size_t p) const { return p; }
  template <scalar U> double slice_weight(std::size_t, std::size_t) const { return 1.0; }
  std::optional<double> norm_scale(std::size_t) const { return 1.0; }  // Z is orthogonal
  bool is_real() const { return true; }
  template <scalar U> auto forward_factor(std::size_t p) const { return current().template forward_factor<U>(p); }
  template <scalar U> auto inverse_factor(std::size_t p) const { return current().template inverse_factor<U>(p); }
  /// @brief The current Z = Q(S)·Z₀ and Z⁻¹ = Zᵀ.
  const Eigen::MatrixXd& matrix() const { return current().matrix(); }
  const Eigen::MatrixXd& inverse_matrix() const { return current().inverse_matrix(); }
  const Eigen::MatrixXd& base_matrix() const { return checked().z0; }
  /// @brief Equal when they are the same handle (one trained Z).
  friend bool operator==(const learned_transform& a, const learned_transform& b) { return a.state_ == b.state_; }

  /// @brief The parameter S (p×p×1) and its accumulated gradient, in memory space S.
  tensor& skew() const { return checked().skew; }
  tensor& skew_grad() const { return checked().skew_grad; }

  /// @brief Starts a forward pass: drops what an earlier pass recorded, and records this one's passes when
  /// `record` (the training phase).
  void begin_pass(bool record) const {
    auto& s = checked();
    ++s.cycle;
    s.members = 0;
    s.tape.clear();
    s.recording = record ? pass_mode::recorded : pass_mode::unrecorded;
  }

  /// @brief One layer's part in the forward/backward cycles of a Z that several layers share.
  struct pass_ticket {
    std::uint64_t cycle = 0;  ///< the cycle the layer last joined
    bool open = false;        ///< its forward pass ran and its backward pass has not ended yet
  };
  /// @brief A layer's forward pass begins. It starts a new cycle (begin_pass(record)) when no layer is in the
  /// current one, or when this layer is already in it with its backward pass still to come (so this is the next
  /// forward pass, the last one's backward never taken); otherwise it joins the current cycle.
  void begin_pass(pass_ticket& ticket, bool record) const {
    auto& s = checked();
    if (s.members == 0 || (ticket.open && ticket.cycle == s.cycle)) begin_pass(record);
    ticket = {s.cycle, true};
    ++s.members;
  }
  /// @brief A layer's backward pass has ended; when it was the last of its cycle, end_backward().
  /// @throws numerical_error as end_backward().
  void end_backward(pass_ticket& ticket) const {
    auto& s = checked();
    if (!ticket.open || ticket.cycle != s.cycle) return;  // not in the current cycle: nothing of it to check
    ticket.open = false;
    if (--s.members == 0) end_backward();
  }
  /// @brief After the backward pass: every recorded pass must have been taken.
  /// @throws numerical_error naming how many were left.
  void end_backward() const {
    const auto& s = checked();
    if (!s.tape.empty())
      throw numerical_error("nn::learned_transform: " + std::to_string(s.tape.size()) +
                            " recorded transform passes were not taken by the backward pass (it must mirror the "
                            "forward pass)");
  }

  /// @brief Called by the layers after a pass of L (inverse = false, `value` its input) or of L⁻¹ (inverse = true,
  /// `value` its output).
  void record_pass(bool inverse, tensor3_view<const T, dextents3, S> value) const {
    auto& s = checked();
    if (s.recording != pass_mode::recorded) return;
    s.tape.push_back({inverse, tensor(value)});
  }
  /// @brief Called by the layers where they apply the adjoint of a recorded pass: `g_hat` is the gradient with
  /// respect to L's output (inverse = false) or L⁻¹'s input (inverse = true). Adds the pass's gradient to skew_grad
  /// (nothing when begin_pass was never called: then Z is used as a fixed transform).
  /// @throws numerical_error when the pass does not match the last recorded one, or the forward pass was begun
  /// unrecorded.
  void backward_pass(bool inverse, tensor3_view<const T, dextents3, S> g_hat) const {
    auto& s = checked();
    if (s.recording == pass_mode::none) return;  // never begun: Z is not trained
    if (s.recording == pass_mode::unrecorded)
      throw numerical_error("nn::learned_transform: a backward pass after a forward pass that was not recorded "
                            "(the evaluation phase): the gradient of Z would be missing");
    const auto what = [](bool inv) { return std::string(inv ? "L^-1" : "L"); };
    if (s.tape.empty())
      throw numerical_error("nn::learned_transform: the backward pass took a pass of " + what(inverse) +
                            " that the forward pass did not record");
    const auto& r = s.tape.back();
    if (r.inverse != inverse || r.value.m() != g_hat.m() || r.value.n() != g_hat.n() || r.value.p() != g_hat.p())
      throw numerical_error("nn::learned_transform: the backward pass took a pass of " + what(inverse) + " on " +
                            std::to_string(g_hat.m()) + "x" + std::to_string(g_hat.n()) + "x" +
                            std::to_string(g_hat.p()) + " where the forward pass's last was " + what(r.inverse) +
                            " on " + r.value.shape());
    Eigen::MatrixXd g_z = tprod::detail::tube_outer<T, S>(g_hat, r.value.view());
    if (inverse) g_z = -g_z;
    s.tape.pop_back();
    const Eigen::MatrixXd g_a = -s.i_plus_q_t * (g_z * s.z0.transpose()) * s.i_plus_a_inv_t;
    const Eigen::MatrixXd g_s = g_a - g_a.transpose();
    if constexpr (std::same_as<S, host_space>) {
      s.skew_grad.slice(0) += g_s.cast<T>();
    } else {
      tensor3<T> host(s.skew_grad.m(), s.skew_grad.n(), 1, uninitialized);
      host.slice(0) = g_s.cast<T>();
      s.skew_grad += copy(host, S{});
    }
  }

 private:
  static Eigen::MatrixXd dct_matrix(std::size_t p) {
    TPROD_EXPECTS(p > 0, "nn::learned_transform: p must be positive");
    return dct{}.template forward_factor<double>(p)->transpose();  // forward_factor is Zᵀ
  }

  /// Since the last begin_pass: none (never begun: the layers' passes are not Z's concern), or whether recorded.
  enum class pass_mode { none, recorded, unrecorded };

  struct record {
    bool inverse;
    tensor value;
  };

  struct state {
    Eigen::MatrixXd z0;
    tensor skew, skew_grad;
    tensor3<T> made_from;  // the S that `z` was made from, on the host
    base z;
    Eigen::MatrixXd i_plus_q_t, i_plus_a_inv_t;  // (I + Q)ᵀ and (I + A)⁻ᵀ for the gradient
    pass_mode recording = pass_mode::none;
    std::vector<record> tape;
    std::uint64_t cycle = 0;  // forward/backward cycles begun (pass_ticket)
    std::size_t members = 0;  // layers in the current cycle whose backward pass has not ended

    explicit state(const Eigen::MatrixXd& base_matrix) : z0(base_matrix) {
      TPROD_EXPECTS(z0.rows() == z0.cols() && z0.rows() > 0, "nn::learned_transform: Z0 must be square and "
                                                             "non-empty, got " + std::to_string(z0.rows()) + "x" +
                                                                 std::to_string(z0.cols()));
      const auto p = std::size_t(z0.rows());
      const double off = (z0.transpose() * z0 - Eigen::MatrixXd::Identity(z0.rows(), z0.cols())).cwiseAbs().maxCoeff();
      if (!(off <= 1e-12))
        throw numerical_error("nn::learned_transform: Z0 must be orthogonal (max |Z0^T Z0 - I| = " +
                              std::to_string(off) + ")");
      skew = tensor(p, p, 1);
      skew_grad = tensor(p, p, 1);
      remake(tensor3<T>(p, p, 1));
    }

    /// Z = Q(S)·Z₀ from S (its host copy).
    void remake(const tensor3<T>& skew_now) {
      const auto n = z0.rows();
      const Eigen::MatrixXd s = skew_now.slice(0).template cast<double>(), a = s - s.transpose();
      const Eigen::MatrixXd eye = Eigen::MatrixXd::Identity(n, n);
      const Eigen::MatrixXd i_plus_a_inv = (eye + a).partialPivLu().inverse();
      const Eigen::MatrixXd q = (eye - a) * i_plus_a_inv;
      z = base(q * z0);
      i_plus_q_t = (eye + q).transpose();
      i_plus_a_inv_t = i_plus_a_inv.transpose();
      made_from = skew_now;
    }
  };

  state& checked() const {
    TPROD_EXPECTS(state_ != nullptr, "nn::learned_transform: default-constructed (no Z)");
    return *state_;
  }
  const base& current() const {
    auto& s = checked();
    const auto changed = [&](const tensor3<T>& now) {
      return !(now.elements().array() == s.made_from.elements().array()).all();
    };
    if constexpr (std::same_as<S, host_space>) {
      if (changed(s.skew)) s.remake(s.skew);
    } else {
      const tensor3<T> now = copy(s.skew, host_space{});  // p² entries: S lives where the optimizer updates it
      if (changed(now)) s.remake(now);
    }
    return s.z;
  }

  std::shared_ptr<state> state_;
};

}  // namespace tprod::nn
