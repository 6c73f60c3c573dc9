// SPDX-License-Identifier: Apache-2.0
// tprod's layers from Python, forward and backward, for tprod.torch: L-multi-head attention and the L-Transformer
// encoder layer (paper 000's post-norm form, paper 001's pre-norm TCP-ViT block, and what lies between) on
// third-order tensors; the MPO linear layer and tensorized spectral attention (paper 002) on matrices of tokens.
//
// A layer object owns its parameters in the C++ layer's own storage: the projections in the transform domain, the
// LayerNorms' Γ and ℬ in their domain, exactly as the C++ layer keeps them. Python sees each parameter as a NumPy
// array over that memory, which tprod.torch wraps as an nn.Parameter without a copy, so an optimizer's in-place
// step updates the layer itself. forward() is handed the parameters' current arrays and copies any that no longer
// share the layer's memory (a parameter whose .data was replaced), so the layer always computes with what the
// caller holds. It returns the output and a pass whose backward() returns the input's gradient and the
// parameters' gradients, in the order of parameters().
#include <functional>
#include <memory>
#include <mutex>

#include "ndarrays.hpp"
#include "tprod/graph/time_graph.hpp"
#include "tprod/nn/attention.hpp"
#include "tprod/nn/encoder.hpp"
#include "tprod/nn/extern_templates.hpp"
#include "tprod/nn/mpo_linear.hpp"
#include "tprod/nn/spectral_attention.hpp"

namespace tprod::python {

namespace {

/// One forward pass, kept for its backward pass.
struct layer_pass {
  std::function<py::tuple(const py::array&)> backward;
};

/// What Python calls; layer_of below is the implementation for one scalar and one layer type.
class layer {
 public:
  virtual ~layer() = default;
  /// [(name, array over the layer's memory)], names as the C++ layer's for_each gives them ("attn.w_qkv", …).
  virtual py::list parameters(const py::object& self) = 0;
  virtual py::tuple forward(const py::array& x, std::size_t batch, const nn::attention_mask& mask,
                            const py::list& current) = 0;
};

/// The extents of a parameter, an input or a gradient: tprod stores each in column-major (Fortran) order.
template <class T>
std::vector<py::ssize_t> extents(const tensor3<T>& t) {
  return {py::ssize_t(t.m()), py::ssize_t(t.n()), py::ssize_t(t.p())};
}
template <class T>
std::vector<py::ssize_t> extents(const ndtensor<T>& t) {
  return std::vector<py::ssize_t>(t.shape().begin(), t.shape().end());
}
template <class T>
std::vector<py::ssize_t> extents(const dense_matrix<T>& t) {
  return {py::ssize_t(t.rows()), py::ssize_t(t.cols())};
}

std::string extents_text(const std::vector<py::ssize_t>& e) {
  std::string s = "(";
  for (std::size_t i = 0; i < e.size(); ++i) s += (i ? ", " : "") + std::to_string(e[i]);
  return s + (e.size() == 1 ? ",)" : ")");
}

/// A NumPy array of Fortran order over t's memory, kept alive by `base` (no copy).
template <class Tensor>
py::array array_over(Tensor& t, py::handle base) {
  using T = std::remove_cvref_t<decltype(*t.data())>;
  const std::vector<py::ssize_t> shape = extents(t);
  std::vector<py::ssize_t> strides;
  py::ssize_t stride = sizeof(T);
  for (const auto e : shape) {
    strides.push_back(stride);
    stride *= e;
  }
  return py::array_t<T>(shape, strides, t.data(), base);
}

/// Copies an array of scalar T, in any memory order, into t of the same shape (one copy, by NumPy).
/// @throws TypeError for another dtype, ValueError for another shape (both naming `what`).
template <class Tensor>
void copy_into(Tensor& t, const py::array& a, const std::string& what) {
  using T = std::remove_cvref_t<decltype(*t.data())>;
  if (scalar_of(a, what.c_str()) != scalar_of_type<T>())
    throw py::type_error("tprod: " + what + " is " + dtype_text(a.dtype()) + "; this layer computes in " +
                         dtype_name<T>());
  const std::vector<py::ssize_t> shape = extents(t);
  if (!std::equal(shape.begin(), shape.end(), a.shape(), a.shape() + a.ndim()) || std::size_t(a.ndim()) != shape.size())
    throw py::value_error("tprod: " + what + " has shape " + shape_text(a) + ", not " + extents_text(shape));
  if (t.size() == 0) return;  // nothing to copy (an empty tensor has no memory to view)
  const py::capsule borrowed(t.data(), [](void*) {});  // a base, so that the array views t instead of copying it
  py::module_::import("numpy").attr("copyto")(array_over(t, borrowed), a, py::arg("casting") = "no");
}

/// A copy of an array as a layer's input or output gradient: a third-order tensor (rows, width, p) for the
/// L-layers, a matrix (rows, features) for the MPO layers (see copy_into).
template <class Tensor>
Tensor input_copy(const py::array& a, const char* what) {
  constexpr std::size_t order = std::same_as<Tensor, tensor3<typename Tensor::value_type>> ? 3 : 2;
  if (std::size_t(a.ndim()) != order)
    throw py::value_error(std::string("tprod: ") + what + " has shape " + shape_text(a) +
                          (order == 3 ? "; the layer takes a third-order tensor (rows, width, p)"
                                      : "; the layer takes a matrix (rows, features)"));
  Tensor t;
  if constexpr (order == 3)
    t = Tensor(std::size_t(a.shape(0)), std::size_t(a.shape(1)), std::size_t(a.shape(2)));
  else
    t.resize(a.shape(0), a.shape(1));
  copy_into(t, a, what);
  return t;
}

/// A result moved into a NumPy array of Fortran order that owns it.
template <class T>
py::array owned_array(tensor3<T>&& t) {
  return to_numpy(std::move(t));
}
template <class T>
py::array owned_array(ndtensor<T>&& t) {
  return nd_to_numpy(std::move(t));
}
template <class T>
py::array owned_array(dense_matrix<T>&& t) {
  auto* owned = new dense_matrix<T>(std::move(t));
  py::capsule owner(owned, [](void* p) { delete static_cast<dense_matrix<T>*>(p); });
  return array_over(*owned, owner);
}

/// The parameters of tensorized spectral attention with the damping c of its bidirectional time graph
/// Ω = ½c^{|l₁−l₂|} (built for each input's sequence length).
template <real_scalar T>
struct tsa_layer_params {
  nn::tsa_params<T> tsa;
  double damping = 0.5;

  template <class F>
  void for_each(F&& f) {
    tsa.for_each(f);
  }
};

void expect_no_mask(const nn::attention_mask& mask, const char* layer) {
  TPROD_EXPECTS(!mask.causal && mask.key_lengths.empty(), std::string(layer) + " takes no attention mask");
}

/// Each layer type's passes in the forms that reuse buffers: the forward pass into an output and a saved state,
/// the backward pass into gradients, both with the layer's scratch (`workspace`), which holds nothing from one pass
/// to the next. Fresh buffers on every call cost a training step of the d = 768 encoder layer about 40 % more than
/// the C++ benchmark, which reuses them: the kernel zero-fills every page of a newly mapped allocation.
template <class Params>
struct passes;

template <class T, class L, class A>
struct passes<nn::encoder_params<T, L, A>> {
  using input = tensor3<T>;
  using saved = nn::encoder_saved<T, nn::attention_cache_of<A>>;
  using workspace = nn::encoder_workspace<T, nn::attention_workspace_of<A>>;
  using grads = nn::encoder_grads<T, L, A>;
  static void forward(const nn::encoder_params<T, L, A>& p, const input& x, std::size_t batch,
                      const nn::attention_mask& mask, input& out, saved& s, workspace& ws) {
    nn::encoder_layer_forward(p, x, batch, mask, out, s, ws);
  }
  static grads backward(const nn::encoder_params<T, L, A>& p, const saved& s, const input& dy, workspace& ws) {
    grads g{{}, zeros_like(p)};
    nn::encoder_layer_backward(p, s, dy, g, ws);
    return g;
  }
};

template <class T, class L, class S>
struct passes<nn::attention_params<T, L, S>> {
  using input = tensor3<T>;
  using saved = nn::attention_saved<T, S>;
  struct workspace {};  // attention keeps its scratch inside its passes
  using grads = nn::attention_grads<T, L, S>;
  static void forward(const nn::attention_params<T, L, S>& p, const input& x, std::size_t batch,
                      const nn::attention_mask& mask, input& out, saved& s, workspace&) {
    nn::attention_forward(p, x, batch, mask, out, s);
  }
  static grads backward(const nn::attention_params<T, L, S>& p, const saved& s, const input& dy, workspace&) {
    return nn::attention_backward(p, s, dy);
  }
};

template <class T>
struct passes<nn::mpo_linear_params<T>> {
  using input = dense_matrix<T>;
  using saved = nn::mpo_linear_saved<T>;
  using workspace = nn::mpo_linear_workspace<T>;
  using grads = nn::mpo_linear_grads<T>;
  static void forward(const nn::mpo_linear_params<T>& p, const input& x, std::size_t,
                      const nn::attention_mask& mask, input& out, saved& s, workspace&) {
    expect_no_mask(mask, "the MPO linear layer");
    nn::mpo_linear_forward<T>(p, x, out, s);
  }
  static grads backward(const nn::mpo_linear_params<T>& p, const saved& s, const input& dy, workspace& ws) {
    grads g;
    nn::mpo_linear_backward<T>(p, s, dy, g, ws);
    return g;
  }
};

/// TSA on `batch` sequences of x.rows() / batch tokens, the key lengths padding each sequence's end.
template <class T>
struct passes<tsa_layer_params<T>> {
  using input = dense_matrix<T>;
  using saved = nn::tsa_saved<T>;
  using workspace = nn::tsa_workspace<T>;
  using grads = nn::tsa_grads<T>;
  static void forward(const tsa_layer_params<T>& p, const input& x, std::size_t batch,
                      const nn::attention_mask& mask, input& out, saved& s, workspace& ws) {
    TPROD_EXPECTS(!mask.causal, "tensorized spectral attention has no causal form (its time graph is "
                                "bidirectional)");
    TPROD_EXPECTS(batch > 0 && std::size_t(x.rows()) % batch == 0,
                  std::to_string(x.rows()) + " rows are not " + std::to_string(batch) + " sequences of one length");
    const dense_matrix<T> omega = bidirectional_time_adjacency<T>(std::size_t(x.rows()) / batch, p.damping);
    nn::tsa_forward<T>(p.tsa, x, omega, mask.key_lengths, out, s, ws);
  }
  static grads backward(const tsa_layer_params<T>& p, const saved& s, const input& dy, workspace& ws) {
    grads g;
    nn::tsa_backward<T>(p.tsa, s, dy, g, ws);
    return g;
  }
};

/// A layer with parameters Params. One workspace serves all its passes, one at a time (a Python thread that calls
/// the layer while another's pass runs waits for it); the states saved for backward passes are recycled: a pass's
/// state returns to the layer when its last reference (the autograd graph's) goes.
template <class Params>
class layer_of final : public layer, public std::enable_shared_from_this<layer_of<Params>> {
  using P = passes<Params>;
  using input = typename P::input;
  using saved = typename P::saved;

 public:
  explicit layer_of(Params p) : params_(std::move(p)) {}

  py::list parameters(const py::object& self) override {
    py::list out;
    // Each array's base is the layer, which lives as long as any of its arrays.
    params_.for_each(
        [&](const auto& name, auto& t) { out.append(py::make_tuple(std::string(name), array_over(t, self))); });
    return out;
  }

  py::tuple forward(const py::array& x, std::size_t batch, const nn::attention_mask& mask,
                    const py::list& current) override {
    adopt(current);
    const input in = input_copy<input>(x, "the input");
    std::shared_ptr<saved> state = recycled_state();
    input out;
    without_gil([&] {
      const std::lock_guard<std::mutex> lock(workspace_mutex_);
      P::forward(params_, in, batch, mask, out, *state, workspace_);
    });
    layer_pass pass;
    pass.backward = [self = this->shared_from_this(), state](const py::array& dy) {
      const input d_out = input_copy<input>(dy, "the output's gradient");
      auto g = without_gil([&] {
        const std::lock_guard<std::mutex> lock(self->workspace_mutex_);
        return P::backward(self->params_, *state, d_out, self->workspace_);
      });
      py::list grads;
      g.d_params.for_each([&](const auto&, auto& t) { grads.append(owned_array(std::move(t))); });
      return py::make_tuple(owned_array(std::move(g.d_input)), grads);
    };
    return py::make_tuple(owned_array(std::move(out)), std::move(pass));
  }

 private:
  /// A saved state from the layer's pool (or a new one) that goes back to the pool when released.
  std::shared_ptr<saved> recycled_state() {
    std::unique_ptr<saved> s;
    {
      const std::lock_guard<std::mutex> lock(pool_mutex_);
      if (!pool_.empty()) {
        s = std::move(pool_.back());
        pool_.pop_back();
      }
    }
    if (!s) s = std::make_unique<saved>();
    return std::shared_ptr<saved>(s.release(), [self = this->shared_from_this()](saved* released) {
      const std::lock_guard<std::mutex> lock(self->pool_mutex_);
      self->pool_.emplace_back(released);
    });
  }

  /// Copies each parameter of `current` (all of the layer's, in its order, or none) that is not this layer's own
  /// memory into the layer.
  void adopt(const py::list& current) {
    std::size_t count = 0;
    params_.for_each([&](const auto&, auto&) { ++count; });
    if (current.empty()) return;
    if (current.size() != count)
      throw py::value_error("tprod: " + std::to_string(current.size()) + " parameters given, the layer has " +
                            std::to_string(count));
    std::size_t i = 0;
    params_.for_each([&](const auto& name, auto& t) {
      const py::array a = current[i++];
      if (a.data() != t.data()) copy_into(t, a, "parameter " + std::string(name));
    });
  }

  Params params_;
  std::mutex workspace_mutex_;
  typename P::workspace workspace_;
  std::mutex pool_mutex_;
  std::vector<std::unique_ptr<saved>> pool_;
};

/// Calls f(std::type_identity<T>{}) for dtype "float32" or "float64", or raises TypeError.
template <class F>
std::shared_ptr<layer> with_layer_dtype(const std::string& dtype, F&& f) {
  if (dtype == "float32") return f(std::type_identity<float>{});
  if (dtype == "float64") return f(std::type_identity<double>{});
  throw py::type_error("tprod: the layers compute in float32 or float64, not " + dtype);
}

/// Calls f(std::type_identity<T>{}, L) for dtype "float32" or "float64" and a real transform (the layers compute
/// in real arithmetic), or raises TypeError.
template <class F>
std::shared_ptr<layer> with_layer_scalar(const std::string& dtype, const transform_object& l, F&& f) {
  const auto with_transform = [&](auto tag) -> std::shared_ptr<layer> {
    using T = typename std::remove_cvref_t<decltype(tag)>::type;
    return std::visit(
        [&](const auto& policy) -> std::shared_ptr<layer> {
          using L = std::remove_cvref_t<decltype(policy)>;
          if constexpr (nn::real_transform<L, T>) {
            return f(tag, policy);
          } else {
            throw py::type_error("tprod: the layers take a transform that keeps real tensors real (dct, identity, "
                                 "a real Z), not " + std::string(L::name()) +
                                 (std::string(L::name()) == "dft" ? " (its transform domain is complex)" : ""));
          }
        },
        l.policy);
  };
  return with_layer_dtype(dtype, with_transform);
}

template <class E>
E choice(const std::string& value, std::initializer_list<std::pair<const char*, E>> choices, const char* what) {
  std::string known;
  for (const auto& [name, e] : choices) {
    if (value == name) return e;
    known += (known.empty() ? "" : ", ") + std::string(name);
  }
  throw py::value_error(std::string("tprod: ") + what + " '" + value + "' is not one of " + known);
}

nn::attention_variant variant_of(const std::string& v) {
  return choice<nn::attention_variant>(v,
                                       {{"spectral", nn::attention_variant::spectral},
                                        {"t_softmax", nn::attention_variant::t_softmax},
                                        {"dimension_wise", nn::attention_variant::dimension_wise}},
                                       "attention variant");
}

}  // namespace

void bind_nn(py::module_& m) {
  py::class_<layer_pass>(m, "_LayerPass")
      .def("backward", [](const layer_pass& p, const py::array& dy) { return p.backward(dy); }, py::arg("dy"),
           "(d_input, [parameter gradients]) of this forward pass, for the output's gradient dy");
  py::class_<layer, std::shared_ptr<layer>>(m, "_Layer")
      .def("parameters", [](const py::object& self) { return self.cast<layer&>().parameters(self); })
      .def(
          "forward",
          [](layer& l, const py::array& x, std::size_t batch, bool causal, std::vector<std::size_t> key_lengths,
             const py::list& current) {
            return l.forward(x, batch, nn::attention_mask{causal, std::move(key_lengths)}, current);
          },
          py::arg("x"), py::arg("batch"), py::arg("causal") = false,
          py::arg("key_lengths") = std::vector<std::size_t>{}, py::arg("parameters") = py::list(),
          "(output, pass) for input x of batch × tokens rows; `parameters` are the current parameter arrays");

  m.def(
      "_attention_layer",
      [](std::size_t width, std::size_t heads, std::size_t p, const transform_object& l, bool bias,
         const std::string& variant, const std::string& dtype, std::uint64_t seed) {
        const auto v = variant_of(variant);
        return with_layer_scalar(dtype, l, [&](auto tag, const auto& policy) -> std::shared_ptr<layer> {
          using T = typename std::remove_cvref_t<decltype(tag)>::type;
          auto params = nn::make_attention_params<T>(width, heads, p, policy, seed, bias, v);
          return std::make_shared<layer_of<decltype(params)>>(std::move(params));
        });
      },
      py::arg("width"), py::arg("heads"), py::arg("p"), py::arg("L"), py::arg("bias"), py::arg("variant"),
      py::arg("dtype"), py::arg("seed"));

  m.def(
      "_encoder_layer",
      [](std::size_t width, std::size_t p, std::size_t heads, std::size_t hidden, const std::string& act,
         bool bias, bool norm_first, const std::string& norm, const std::string& variant, double eps,
         const transform_object& l, const std::string& dtype, std::uint64_t seed) {
        nn::layer_config cfg;
        cfg.width = width;
        cfg.slices = p;
        cfg.heads = heads;
        cfg.hidden = hidden;
        cfg.act = choice<nn::activation>(
            act, {{"relu", nn::activation::relu}, {"gelu", nn::activation::gelu},
                  {"gelu_tanh", nn::activation::gelu_tanh}},
            "activation");
        cfg.bias = bias;
        cfg.placement = norm_first ? nn::norm_placement::pre : nn::norm_placement::post;
        cfg.norm = choice<nn::layer_norm_kind>(norm,
                                               {{"original_domain", nn::layer_norm_kind::original_domain},
                                                {"transform_domain", nn::layer_norm_kind::transform_domain}},
                                               "norm");
        cfg.attention = variant_of(variant);
        if (!(eps > 0)) throw py::value_error("tprod: eps = " + std::to_string(eps) + " must be positive");
        cfg.eps = eps;
        cfg.validate();
        return with_layer_scalar(dtype, l, [&](auto tag, const auto& policy) -> std::shared_ptr<layer> {
          using T = typename std::remove_cvref_t<decltype(tag)>::type;
          auto params = nn::make_encoder_params<T>(cfg, policy, seed);
          return std::make_shared<layer_of<decltype(params)>>(std::move(params));
        });
      },
      py::arg("width"), py::arg("p"), py::arg("heads"), py::arg("hidden"), py::arg("activation"), py::arg("bias"),
      py::arg("norm_first"), py::arg("norm"), py::arg("variant"), py::arg("eps"), py::arg("L"), py::arg("dtype"),
      py::arg("seed"));

  m.def(
      "_mpo_linear_layer",
      [](const nd_shape& row_dims, const nd_shape& col_dims, const std::vector<std::size_t>& bond_ranks,
         const std::string& dtype, std::uint64_t seed) {
        return with_layer_dtype(dtype, [&](auto tag) -> std::shared_ptr<layer> {
          using T = typename std::remove_cvref_t<decltype(tag)>::type;
          auto params = nn::make_mpo_linear_params<T>(row_dims, col_dims, bond_ranks, seed);
          return std::make_shared<layer_of<decltype(params)>>(std::move(params));
        });
      },
      py::arg("row_dims"), py::arg("col_dims"), py::arg("bond_ranks"), py::arg("dtype"), py::arg("seed"));

  m.def(
      "_tsa_layer",
      [](const nd_shape& row_dims, const nd_shape& col_dims, std::size_t rank, std::size_t heads,
         std::size_t filter_order, double damping, const std::string& dtype, std::uint64_t seed) {
        if (!(damping > 0 && damping < 1))
          throw py::value_error("tprod: the time graph's damping c = " + std::to_string(damping) +
                                " must lie in (0, 1)");
        return with_layer_dtype(dtype, [&](auto tag) -> std::shared_ptr<layer> {
          using T = typename std::remove_cvref_t<decltype(tag)>::type;
          tsa_layer_params<T> params{nn::make_tsa_params<T>(row_dims, col_dims, rank, heads, filter_order, seed),
                                     damping};
          return std::make_shared<layer_of<tsa_layer_params<T>>>(std::move(params));
        });
      },
      py::arg("row_dims"), py::arg("col_dims"), py::arg("rank"), py::arg("heads"), py::arg("filter_order"),
      py::arg("damping"), py::arg("dtype"), py::arg("seed"));
}

}  // namespace tprod::python
