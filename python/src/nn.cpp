// SPDX-License-Identifier: Apache-2.0
// tprod's layers from Python: L-multi-head attention and the L-Transformer encoder layer (paper 000's post-norm
// form, paper 001's pre-norm TCP-ViT block, and what lies between), forward and backward, for tprod.torch.
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

#include "arrays.hpp"
#include "tprod/nn/attention.hpp"
#include "tprod/nn/encoder.hpp"
#include "tprod/nn/extern_templates.hpp"

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

/// A NumPy array of Fortran order over t's memory, kept alive by `base` (no copy).
template <class T>
py::array array_over(tensor3<T>& t, py::handle base) {
  const auto s = py::ssize_t(sizeof(T)), m = py::ssize_t(t.m()), n = py::ssize_t(t.n());
  return py::array_t<T>({m, n, py::ssize_t(t.p())}, {s, s * m, s * m * n}, t.data(), base);
}

/// Copies a 3-dimensional array of scalar T, in any memory order, into t of the same shape (one copy, by NumPy).
/// @throws TypeError for another dtype, ValueError for another shape (both naming `what`).
template <class T>
void copy_into(tensor3<T>& t, const py::array& a, const std::string& what) {
  if (scalar_of(a, what.c_str()) != scalar_of_type<T>())
    throw py::type_error("tprod: " + what + " is " + dtype_text(a.dtype()) + "; this layer computes in " +
                         dtype_name<T>());
  if (a.ndim() != 3 || std::size_t(a.shape(0)) != t.m() || std::size_t(a.shape(1)) != t.n() ||
      std::size_t(a.shape(2)) != t.p())
    throw py::value_error("tprod: " + what + " has shape " + shape_text(a) + ", not (" + std::to_string(t.m()) +
                          ", " + std::to_string(t.n()) + ", " + std::to_string(t.p()) + ")");
  if (t.size() == 0) return;  // nothing to copy (an empty tensor has no memory to view)
  const py::capsule borrowed(t.data(), [](void*) {});  // a base, so that the array views t instead of copying it
  py::module_::import("numpy").attr("copyto")(array_over(t, borrowed), a, py::arg("casting") = "no");
}

/// A copy of a 3-dimensional array of scalar T as a tprod tensor of its shape (see copy_into).
template <class T>
tensor3<T> tensor_copy(const py::array& a, const char* what) {
  if (a.ndim() != 3)
    throw py::value_error(std::string("tprod: ") + what + " has shape " + shape_text(a) +
                          "; the layer takes a third-order tensor (rows, width, p)");
  tensor3<T> t(std::size_t(a.shape(0)), std::size_t(a.shape(1)), std::size_t(a.shape(2)));
  copy_into(t, a, what);
  return t;
}

/// The forward and backward passes of each layer type, under one name.
template <class T, class L>
auto layer_forward(const nn::attention_params<T, L>& p, const tensor3<T>& x, std::size_t batch,
                   const nn::attention_mask& mask) {
  return nn::attention_forward(p, x, batch, mask);
}
template <class T, class L, class Saved>
auto layer_backward(const nn::attention_params<T, L>& p, const Saved& saved, const tensor3<T>& dy) {
  return nn::attention_backward(p, saved, dy);
}
template <class T, class L>
auto layer_forward(const nn::encoder_params<T, L>& p, const tensor3<T>& x, std::size_t batch,
                   const nn::attention_mask& mask) {
  return nn::encoder_layer_forward(p, x, batch, mask);
}
template <class T, class L, class Saved>
auto layer_backward(const nn::encoder_params<T, L>& p, const Saved& saved, const tensor3<T>& dy) {
  return nn::encoder_layer_backward(p, saved, dy);
}

template <class T, class Params>
class layer_of final : public layer, public std::enable_shared_from_this<layer_of<T, Params>> {
 public:
  explicit layer_of(Params p) : params_(std::move(p)) {}

  py::list parameters(const py::object& self) override {
    py::list out;
    // Each array's base is the layer, which lives as long as any of its arrays.
    params_.for_each(
        [&](const auto& name, tensor3<T>& t) { out.append(py::make_tuple(std::string(name), array_over(t, self))); });
    return out;
  }

  py::tuple forward(const py::array& x, std::size_t batch, const nn::attention_mask& mask,
                    const py::list& current) override {
    adopt(current);
    const tensor3<T> in = tensor_copy<T>(x, "the input");
    auto run = without_gil([&] { return layer_forward(params_, in, batch, mask); });
    auto saved = std::make_shared<decltype(run.second)>(std::move(run.second));
    layer_pass pass;
    pass.backward = [self = this->shared_from_this(), saved](const py::array& dy) {
      const tensor3<T> d_out = tensor_copy<T>(dy, "the output's gradient");
      auto g = without_gil([&] { return layer_backward(self->params_, *saved, d_out); });
      py::list grads;
      g.d_params.for_each([&](const auto&, tensor3<T>& t) { grads.append(to_numpy(std::move(t))); });
      return py::make_tuple(to_numpy(std::move(g.d_input)), grads);
    };
    return py::make_tuple(to_numpy(std::move(run.first)), std::move(pass));
  }

 private:
  /// Copies each parameter of `current` (all of the layer's, in its order, or none) that is not this layer's own
  /// memory into the layer.
  void adopt(const py::list& current) {
    std::size_t count = 0;
    params_.for_each([&](const auto&, tensor3<T>&) { ++count; });
    if (current.empty()) return;
    if (current.size() != count)
      throw py::value_error("tprod: " + std::to_string(current.size()) + " parameters given, the layer has " +
                            std::to_string(count));
    std::size_t i = 0;
    params_.for_each([&](const auto& name, tensor3<T>& t) {
      const py::array a = current[i++];
      if (a.data() != t.data()) copy_into(t, a, "parameter " + std::string(name));
    });
  }

  Params params_;
};

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
  if (dtype == "float32") return with_transform(std::type_identity<float>{});
  if (dtype == "float64") return with_transform(std::type_identity<double>{});
  throw py::type_error("tprod: the layers compute in float32 or float64, not " + dtype);
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
          return std::make_shared<layer_of<T, decltype(params)>>(std::move(params));
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
          return std::make_shared<layer_of<T, decltype(params)>>(std::move(params));
        });
      },
      py::arg("width"), py::arg("p"), py::arg("heads"), py::arg("hidden"), py::arg("activation"), py::arg("bias"),
      py::arg("norm_first"), py::arg("norm"), py::arg("variant"), py::arg("eps"), py::arg("L"), py::arg("dtype"),
      py::arg("seed"));
}

}  // namespace tprod::python
