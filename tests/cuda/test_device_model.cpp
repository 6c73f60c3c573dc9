// SPDX-License-Identifier: Apache-2.0
// The model layers on device tensors against the CPU backend on the same inputs: the sequence tasks (row blocks of
// every sequence, their sum over the batch, mean pooling with padding), the positional encodings (every α strategy,
// learnable α, the learned table), the class token and class-token pooling, the flattening before the head, dropout
// (statistics of cuRAND's masks, reproducible per pass), a whole training step of the text classifier and of the
// vision transformer and of the language model (loss, every gradient, the parameters after clipping and AdamW), the
// decoder layer and stack, the hand-composition wrappers (attention_layer, activation_layer), paper 002's attentions
// (additive attention's layer forward and backward; the classifiers of TSA, dot-product and additive attention, a
// training step each), paper 003's MPO over-parameterization (the merge, a training step, I_W), paper 004's
// compression of a device model's layers, and checkpoints written
// from one memory space and read into the other.
// The whole-model training steps run in float, the precision the examples train in: their layers' double paths are
// each compared above and in test_device_nn.cpp, and a model in both scalars doubled this file's compile time.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "cuda_test.hpp"
#include "small_models.hpp"
#include "tprod/nn/model/checkpoint.hpp"
#include "tprod/nn/decoder.hpp"
#include "tprod/nn/learned_transform.hpp"
#include "tprod/nn/model.hpp"
#include "tprod/nn/model/activation_layer.hpp"
#include "tprod/nn/model/compress_attention.hpp"
#include "tprod/nn/model/additive_attention_layer.hpp"
#include "tprod/nn/model/attention_layer.hpp"
#include "tprod/nn/model/spectral_attention_layer.hpp"
#include "tprod/nn/model/decoder_stack.hpp"
#include "tprod/nn/model/mpo_finetune.hpp"
#include "tprod/nn/model/training_state.hpp"

using namespace tprod;
using namespace tprod::test;

namespace {

// One training step on both models: the loss and every gradient agree, then after clipping and one AdamW update
// every parameter does.
template <class T, class HostModel, class DeviceModel>
void check_training_step(HostModel& host, DeviceModel& device, const tensor3<T>& input, const nn::batch& b,
                         const std::vector<std::size_t>& labels, std::size_t roundings) {
  auto hp = nn::parameters<T>(host);
  auto dp = nn::parameters<T>(device);
  REQUIRE(hp.size() == dp.size());
  const auto hs = nn::classification_step(host, input, b, labels);
  const auto ds = nn::classification_step(device, to_device(input), b, labels);
  CHECK(ds.loss == doctest::Approx(hs.loss).epsilon(tol<T>(roundings)));
  CHECK(ds.predicted == hs.predicted);
  for (std::size_t i = 0; i < hp.size(); ++i) {
    CAPTURE(hp.grads.names[i]);
    REQUIRE(hp.grads.names[i] == dp.grads.names[i]);
    check_close(*hp.grads.tensors[i], *dp.grads.tensors[i], roundings);
  }
  const double hn = nn::clip_grad_norm(hp.grads, 0.5), dn = nn::clip_grad_norm(dp.grads, 0.5);
  CHECK(dn == doctest::Approx(hn).epsilon(tol<T>(roundings)));
  nn::adamw<T> ho({1e-2, 0.9, 0.999, 1e-8, 0.01});
  nn::adamw<T, device_space> dopt({1e-2, 0.9, 0.999, 1e-8, 0.01});
  nn::step(ho, hp);
  nn::step(dopt, dp);
  for (std::size_t i = 0; i < hp.size(); ++i) {
    CAPTURE(hp.values.names[i]);
    check_close(*hp.values.tensors[i], *dp.values.tensors[i], roundings);
  }
}

// Equal shapes and bit-for-bit equal elements (both on the host).
template <class T>
bool same(const tensor3<T>& a, const tensor3<T>& b) {
  return a.extents() == b.extents() && std::equal(a.data(), a.data() + a.size(), b.data());
}

}  // namespace

TEST_CASE_TEMPLATE("device sequence tasks equal the host's: row blocks, their batch sum, mean pooling", T, TPROD_DEVICE_REAL_SCALARS) {
  const auto host = detail::system_of<host_space>();
  const auto dev = detail::system_of<device_space>();
  const std::size_t batch = 3, len = 7, n = 5, p = 3;
  const auto x = random_tensor3<T>(batch * len, n, p, 1), table = random_tensor3<T>(len, n, p, 2);
  const auto dx = to_device(x), dtable = to_device(table);
  using rows = backend::kernels::sequence_rows;
  // rows 2…5 of every sequence into rows 1…4 of sequences of length 6, and the shared table (stride 0) added on
  for (const bool accumulate : {false, true}) {
    auto out = random_tensor3<T>(batch * 6, n, p, 3);
    auto dout = to_device(out);
    copy_sequence_rows(host, x.dynamic_view(), rows{len, 2, 4}, out.dynamic_view(), rows{6, 1, 4}, batch, accumulate);
    copy_sequence_rows(dev, dx.dynamic_view(), rows{len, 2, 4}, dout.dynamic_view(), rows{6, 1, 4}, batch, accumulate);
    check_close(out, dout, 2);
    copy_sequence_rows(host, table.dynamic_view(), rows{0, 0, 6}, out.dynamic_view(), rows{6, 0, 6}, batch, true);
    copy_sequence_rows(dev, dtable.dynamic_view(), rows{0, 0, 6}, dout.dynamic_view(), rows{6, 0, 6}, batch, true);
    check_close(out, dout, 2);
  }
  tensor3<T> sum(3, n, p);
  auto dsum = to_device(sum);
  sum_sequence_rows(host, x.dynamic_view(), rows{len, 4, 3}, batch, sum.dynamic_view());
  sum_sequence_rows(dev, dx.dynamic_view(), rows{len, 4, 3}, batch, dsum.dynamic_view());
  check_close(sum, dsum, batch);
  for (const std::vector<std::size_t>& lengths : {std::vector<std::size_t>{}, std::vector<std::size_t>{7, 1, 4}}) {
    CAPTURE(lengths.size());
    const auto pooled = nn::mean_pool_forward(x, batch, lengths);
    check_close(pooled, nn::mean_pool_forward(dx, batch, lengths), len);
    const auto g = random_tensor3<T>(batch, n, p, 4);
    check_close(nn::mean_pool_backward(g, len, lengths), nn::mean_pool_backward(to_device(g), len, lengths), 2);
  }
}

TEST_CASE_TEMPLATE("device positional encodings equal the host's: every α strategy, learnable α, the learned table", T,
                   TPROD_DEVICE_REAL_SCALARS) {
  const std::size_t batch = 2, len = 6, ds = 8, p = 4;
  const auto x = random_tensor3<T>(batch * len, ds, p, 5), g = random_tensor3<T>(batch * len, ds, p, 6);
  for (const auto s : {nn::alpha_strategy::standard, nn::alpha_strategy::linear, nn::alpha_strategy::exponential,
                       nn::alpha_strategy::harmonic}) {
    CAPTURE(std::string(nn::name(s)));
    for (const bool learnable : {false, true}) {
      const auto prm = nn::make_sinusoidal_positional<T>(p, s, learnable);
      const auto dprm = nn::copy(prm, device_space{});
      check_close(nn::positional_forward(prm, x, batch), nn::positional_forward(dprm, to_device(x), batch), 2);
      const auto grad = nn::positional_backward(prm, g, batch);
      const auto dgrad = nn::positional_backward(dprm, to_device(g), batch);
      check_close(grad.alpha, dgrad.alpha, batch * len * ds * 4);
      if (learnable) CHECK(double(frobenius_norm(grad.alpha)) > 0);  // the check above compared something
    }
  }
  const auto learned = nn::make_learned_positional<T>(len, ds, p, 7);
  const auto dlearned = nn::copy(learned, device_space{});
  check_close(nn::positional_forward(learned, x, batch), nn::positional_forward(dlearned, to_device(x), batch), 2);
  check_close(nn::positional_backward(learned, g, batch).table,
              nn::positional_backward(dlearned, to_device(g), batch).table, batch);
  CHECK_THROWS_WITH_AS(nn::positional_forward(dlearned, to_device(random_tensor3<T>(batch * 5, ds, p, 8)), batch),
                       doctest::Contains("learned table"), shape_error);
}

TEST_CASE_TEMPLATE("device class token, class-token pooling and flattening equal the host's", T, TPROD_DEVICE_REAL_SCALARS) {
  const std::size_t batch = 3, len = 4, ds = 5, p = 2;
  const auto token = nn::make_class_token<T>(ds, p, 9);
  const auto dtoken = nn::copy(token, device_space{});
  const auto x = random_tensor3<T>(batch * len, ds, p, 10);
  const auto y = nn::prepend_class_token(token, x, batch);
  check_close(y, nn::prepend_class_token(dtoken, to_device(x), batch), 1);
  const auto g = random_tensor3<T>(batch * (len + 1), ds, p, 11);
  const auto [dx, dt] = nn::prepend_class_token_backward(g, batch);
  const auto [ddx, ddt] = nn::prepend_class_token_backward(to_device(g), batch);
  check_close(dx, ddx, 1);
  check_close(dt.token, ddt.token, batch);
  check_close(nn::class_token_pool_forward(y, batch), nn::class_token_pool_forward(to_device(y), batch), 1);
  const auto gp = random_tensor3<T>(batch, ds, p, 12);
  check_close(nn::class_token_pool_backward(gp, len + 1), nn::class_token_pool_backward(to_device(gp), len + 1), 1);
  const auto flat = nn::slices_side_by_side(x);
  check_close(flat, nn::slices_side_by_side(to_device(x)), 1);
  check_close(nn::slices_stacked(flat, p), nn::slices_stacked(to_device(flat), p), 1);
}

TEST_CASE("device dropout: cuRAND's masks keep 1 − r of the elements, scaled, reproducibly per pass") {
  const double rate = 0.3;
  const std::size_t rows = 1000, n = 50, p = 2, count = rows * n * p;
  nn::dropout<float, device_space> drop(rate, 42);
  const auto x = random_tensor3<float>(rows, n, p, 13);
  const auto dx = to_device(x);
  nn::batch b{1};
  b.pass = 7;
  const auto y = to_host(drop.forward(dx, b));
  std::size_t kept = 0;
  double worst = 0;
  for (std::size_t i = 0; i < count; ++i) {
    if (y.data()[i] == 0.0f) continue;
    ++kept;
    worst = std::max(worst, std::abs(double(y.data()[i]) - double(x.data()[i]) / (1 - rate)));
  }
  // Binomial(count, 1 − r): six standard deviations either side
  const double mean = double(count) * (1 - rate), sd = std::sqrt(double(count) * rate * (1 - rate));
  CHECK(std::abs(double(kept) - mean) < 6 * sd);
  CHECK(worst <= 4 * std::numeric_limits<float>::epsilon() * 10);
  // backward multiplies by the same mask
  const auto g = random_tensor3<float>(rows, n, p, 14);
  const auto dg = to_host(drop.backward(to_device(g)));
  for (std::size_t i = 0; i < count; i += 97) CHECK((dg.data()[i] == 0.0f) == (y.data()[i] == 0.0f));
  // the same pass draws the same mask, another pass another one; evaluation is the identity
  CHECK(same(to_host(drop.forward(dx, b)), y));
  b.pass = 8;
  CHECK_FALSE(same(to_host(drop.forward(dx, b)), y));
  b.mode = nn::phase::eval;
  CHECK(&drop.forward(dx, b) == &dx);
}

TEST_CASE_TEMPLATE("device hand-composition wrappers equal the host's: attention_layer and activation_layer", T,
                   TPROD_DEVICE_REAL_SCALARS) {
  // two sequences of 5 tokens, the second padded after 3 (the batch's lengths are the key-padding mask)
  const std::size_t batch = 2, t = 5, ds = 8, p = 3;
  const nn::batch b(batch, {}, {5, 3});
  const auto x = random_tensor3<T>(batch * t, ds, p, 40), g = random_tensor3<T>(batch * t, ds, p, 41);
  for (const auto variant : {nn::attention_variant::spectral, nn::attention_variant::dimension_wise}) {
    CAPTURE(int(variant));
    const auto prm = nn::make_attention_params<T>(ds, 2, p, dct{}, 42, true, variant);
    nn::attention_layer<T, dct> host(prm);
    nn::attention_layer<T, dct, nn::attention_params<T, dct, device_space>> device(nn::copy(prm, device_space{}));
    static_assert(std::same_as<nn::layer_space_t<decltype(device)>, device_space>);
    check_close(host.forward(x, b), device.forward(to_device(x), b), 200);
    check_close(host.backward(g), device.backward(to_device(g)), 400);
    check_close(host.params.grad.w_qkv.data(), device.params.grad.w_qkv.data(), 400);
    check_close(host.params.grad.w_o.data(), device.params.grad.w_o.data(), 400);
  }
  nn::activation_layer<T> host_gelu(nn::activation::gelu);
  nn::activation_layer<T, device_space> device_gelu(nn::activation::gelu);
  check_close(host_gelu.forward(x, b), device_gelu.forward(to_device(x), b), 4);
  check_close(host_gelu.backward(g), device_gelu.backward(to_device(g)), 8);
}

TEST_CASE_TEMPLATE("device additive attention (paper 002) equals the host's: heads 1 and 2, key padding, every gradient",
                   T, TPROD_DEVICE_REAL_SCALARS) {
  // three sequences of 6 tokens, width 8; the padding leaves sequence 1 a single valid key
  const std::size_t batch = 3, t = 6, d = 8;
  const auto x = random_tensor3<T>(batch * t, d, 1, 150), g = random_tensor3<T>(batch * t, d, 1, 151);
  for (const std::size_t heads : {std::size_t(1), std::size_t(2)}) {
    for (const std::vector<std::size_t>& lengths : {std::vector<std::size_t>{}, std::vector<std::size_t>{4, 1, 6}}) {
      CAPTURE(heads);
      CAPTURE(lengths.size());
      const auto prm = nn::make_additive_attention_params<T>(d, heads, 152 + heads);
      nn::additive_attention_layer<T> host(prm);
      nn::additive_attention_layer<T, device_space> device(nn::copy(prm, device_space{}));
      static_assert(std::same_as<nn::layer_space_t<decltype(device)>, device_space>);
      const nn::batch b(batch, {}, lengths);
      const std::size_t roundings = 4 * d + 2 * t;
      check_close(host.forward(x, b), device.forward(to_device(x), b), roundings);
      check_close(host.backward(g), device.backward(to_device(g)), 2 * roundings);
      auto hp = nn::parameters<T>(host);
      auto dp = nn::parameters<T>(device);
      REQUIRE(hp.size() == dp.size());
      for (std::size_t i = 0; i < hp.size(); ++i) {
        CAPTURE(hp.grads.names[i]);
        check_close(*hp.grads.tensors[i], *dp.grads.tensors[i], 2 * batch * t * roundings);
      }
    }
  }
  // the host's refusals hold on the device
  nn::additive_attention_layer<float, device_space> device(
      nn::copy(nn::make_additive_attention_params<float>(8, 2, 1), device_space{}));
  CHECK_THROWS_WITH_AS(device.forward(device_tensor3<float>(12, 8, 1), nn::batch(2, {}, {6, 0})),
                       doctest::Contains("sequence 1 has no valid token"), shape_error);
}

TEST_CASE_TEMPLATE("device paper 002 classifiers (TSA, dot-product, additive attention): a training step equals the "
                   "host's",
                   T, float) {
  // the tsa_text_classifier example's three models at a small size: width 8, two heads, the padded batch of
  // small_text_batch, no dropout (the backends draw different masks)
  const nn::attention_classifier_config c{11, 8, 5, 3, 0.0, 0.5, 7};
  const auto step = [&](auto host_attention, auto device_attention) {
    auto host = nn::make_attention_classifier<T>(std::move(host_attention), c);
    auto device = nn::make_attention_classifier<T>(std::move(device_attention), c);
    static_assert(std::same_as<nn::layer_space_t<decltype(device)>, device_space>);
    check_training_step<T>(host, device, tensor3<T>(), small_text_batch(), {0, 2, 1}, 2000);
  };
  SUBCASE("TSA") {
    const auto prm = nn::make_qtt_tsa_params<T>(8, 2, 0, 160);
    step(nn::spectral_attention_layer<T>(prm, 0.9), nn::spectral_attention_layer<T, device_space>(prm, 0.9));
  }
  SUBCASE("TSA with a learnable filter") {
    const auto prm = nn::make_qtt_tsa_params<T>(8, 2, 3, 161);
    step(nn::spectral_attention_layer<T>(prm, 0.8), nn::spectral_attention_layer<T, device_space>(prm, 0.8));
  }
  SUBCASE("dot-product attention") {
    const auto prm = nn::make_attention_params<T>(8, 2, 1, identity_transform{}, 162);
    step(nn::attention_layer<T, identity_transform>(prm),
         nn::attention_layer<T, identity_transform, nn::attention_params<T, identity_transform, device_space>>(
             nn::to_space<device_space>(prm)));
  }
  SUBCASE("additive attention") {
    const auto prm = nn::make_additive_attention_params<T>(8, 2, 163);
    step(nn::additive_attention_layer<T>(prm), nn::additive_attention_layer<T, device_space>(nn::copy(prm, device_space{})));
  }
}

TEST_CASE_TEMPLATE("device MPO over-parameterization (paper 003): the merge, a training step and I_W equal the host's",
                   T, float) {
  auto c = small_text_config();
  c.slices = 1;  // over-parameterization takes the p = 1 matrices of a standard model
  auto host_model = nn::make_text_classifier<T>(c, identity_transform{});
  auto device_model = nn::make_text_classifier<T>(c, identity_transform{}, device_space{});
  nn::mpo_overparameterized<T, decltype(host_model)> host(host_model);
  nn::mpo_overparameterized<T, decltype(device_model)> device(device_model);
  static_assert(std::same_as<nn::layer_space_t<decltype(device)>, device_space>);
  for (const char* matrix : {"encoder.0.attn.w_qkv", "encoder.1.ffn.w1", "head.weight"}) {
    host.over_parameterize(matrix, std::nullopt, 3);
    device.over_parameterize(matrix, std::nullopt, 3);
    CHECK(device.weight(matrix).full() == host.weight(matrix).full());  // one TT-SVD, of the same W, on the host
  }
  CHECK(device.core_parameter_count() == host.core_parameter_count());
  check_training_step<T>(host, device, tensor3<T>(), small_text_batch(), {0, 2, 1}, 2000);
  // the updated cores merged back into the dense models
  auto hp = nn::parameters<T>(host.merged());
  auto dp = nn::parameters<T>(device.merged());
  for (std::size_t i = 0; i < hp.size(); ++i) {
    CAPTURE(hp.values.names[i]);
    check_close(*hp.values.tensors[i], *dp.values.tensors[i], 2000);
  }
  // I_W of the dense matrices over one batch's gradients
  const std::vector<std::string> dense{"encoder.0.ffn.w1", "encoder.1.attn.w_o"};
  nn::importance_meter<T> host_meter(host, dense);
  nn::importance_meter<T, device_space> device_meter(device, dense);
  nn::parameters<T>(host).zero_grad();
  nn::parameters<T>(device).zero_grad();
  nn::classification_step(host, tensor3<T>(), small_text_batch(), {1, 0, 2});
  nn::classification_step(device, device_tensor3<T>(), small_text_batch(), {1, 0, 2});
  host_meter.accumulate();
  device_meter.accumulate();
  for (const auto& name : dense) {
    CAPTURE(name);
    CHECK(device_meter.scores().at(name) == doctest::Approx(host_meter.scores().at(name)).epsilon(tol<T>(2000)));
  }
}

TEST_CASE_TEMPLATE("device TensorLLM (paper 004): a device model's layers compressed as the host's", T, float) {
  auto c = small_text_config();
  c.slices = 1;  // standard layers: plain W^Q, W^K, W^V, W^O
  auto host = nn::make_text_classifier<T>(c, identity_transform{});
  auto device = nn::make_text_classifier<T>(c, identity_transform{}, device_space{});
  auto& hs = host.template get<3>();
  auto& ds = device.template get<3>();
  const std::vector<std::size_t> layers{0, 1};
  const auto hr = nn::compress_attention(hs, layers, {.ranks = {4, 2, 2}});
  const auto dr = nn::compress_attention(ds, layers, {.ranks = {4, 2, 2}});
  REQUIRE(dr.size() == hr.size());
  for (std::size_t j = 0; j < hr.size(); ++j) {
    CHECK(dr[j].compression_ratio == hr[j].compression_ratio);
    CHECK(dr[j].relative_error.query == hr[j].relative_error.query);  // one host computation of the same weights
    const auto hw = nn::attention_weights_of(hs[layers[j]].attn), dw = nn::attention_weights_of(ds[layers[j]].attn);
    CHECK(dw.query == hw.query);
    CHECK(dw.output == hw.output);
  }
  const auto hf = nn::laser_ffn(hs, layers, 2), df = nn::laser_ffn(ds, layers, 2);
  CHECK(df[1].input_error == hf[1].input_error);
  check_close(hs[1].ffn.w1.data(), ds[1].ffn.w1.data(), 1);
  // the compressed models compute the same loss
  const auto eval = small_text_batch(nn::phase::eval);
  const auto h = nn::classification_step(host, tensor3<T>(), eval, {0, 2, 1});
  const auto d = nn::classification_step(device, device_tensor3<T>(), eval, {0, 2, 1});
  CHECK(d.loss == doctest::Approx(h.loss).epsilon(tol<T>(2000)));
}

TEST_CASE_TEMPLATE("device text classifier: a whole training step equals the host's", T, float) {
  for (const std::size_t p : {std::size_t(1), std::size_t(2)}) {
    CAPTURE(p);
    auto c = small_text_config();
    c.slices = p;
    auto host = nn::make_text_classifier<T>(c, dct{});
    auto device = nn::make_text_classifier<T>(c, dct{}, device_space{});
    static_assert(std::same_as<nn::layer_space_t<decltype(device)>, device_space>);
    check_training_step<T>(host, device, tensor3<T>(), small_text_batch(), {0, 2, 1}, 2000);
  }
}

TEST_CASE_TEMPLATE("device text classifier with a learned transform: a training step, Z's gradient and update included",
                   T, float) {
  // learned_transform<T, device_space> keeps S, its gradient and the recorded passes on the device: the step's
  // gradient of S (the parameter "encoder.transform.skew") and S after AdamW equal the host's
  auto c = small_text_config();
  c.slices = 4;
  auto host = nn::make_text_classifier<T>(c, nn::learned_transform<T>(4));
  auto device = nn::make_text_classifier<T>(c, nn::learned_transform<T, device_space>(4), device_space{});
  check_training_step<T>(host, device, tensor3<T>(), small_text_batch(), {0, 2, 1}, 2000);
  // the next forward pass remakes Z from the updated S on both sides: the same loss again
  const auto hs = nn::classification_step(host, tensor3<T>(), small_text_batch(), {0, 2, 1});
  const auto ds = nn::classification_step(device, device_tensor3<T>(), small_text_batch(), {0, 2, 1});
  CHECK(ds.loss == doctest::Approx(hs.loss).epsilon(tol<T>(2000)));
}

TEST_CASE_TEMPLATE("device vision transformer (paper 001's layer): a whole training step equals the host's", T, float) {
  const auto c = small_vit_config();
  auto host = nn::make_vit_classifier<T>(c, dct{});
  auto device = nn::make_vit_classifier<T>(c, dct{}, device_space{});
  const auto x = random_tensor3<T>(2 * 4, 5, 3, 15);
  check_training_step<T>(host, device, x, nn::batch{2, {}, {}, nn::phase::train}, {2, 0}, 2000);
}

TEST_CASE_TEMPLATE("device language model: a whole training step on next-token labels equals the host's", T, float) {
  const auto c = small_lm_config(2);
  auto host = nn::make_language_model<T>(c, dct{});
  auto device = nn::make_language_model<T>(c, dct{}, device_space{});
  const auto b = small_text_batch();
  check_training_step<T>(host, device, tensor3<T>(), b, nn::next_token_labels(b.tokens, 5, b.lengths), 2000);
  // generation reads the device's logits back: the same greedy continuation
  nn::generation_options g;
  g.tokens = 4;
  g.top_k = 1;
  CHECK(nn::generate<T>(device, {1, 2, 3}, 5, g) == nn::generate<T>(host, {1, 2, 3}, 5, g));
}

TEST_CASE_TEMPLATE("device decoder layer and stack equal the host's: causal self-attention, padded memory", T, TPROD_DEVICE_REAL_SCALARS) {
  const auto cfg = nn::paper000_config(8, 2, 8, 2, nn::activation::gelu);
  const std::size_t batch = 2, len = 3, mem_len = 4;
  const auto prm = nn::make_decoder_params<T>(cfg, dct{}, 20);
  const auto dprm = nn::copy(prm, device_space{});
  const auto x = random_tensor3<T>(batch * len, 4, 2, 21), memory = random_tensor3<T>(batch * mem_len, 4, 2, 22);
  const auto g = random_tensor3<T>(batch * len, 4, 2, 23);
  const nn::decoder_masks masks{nn::attention_mask{true, {3, 2}}, nn::attention_mask{false, {4, 3}}};
  const auto [y, saved] = nn::decoder_layer_forward(prm, x, memory, batch, masks);
  const auto [dy, dsaved] = nn::decoder_layer_forward(dprm, to_device(x), to_device(memory), batch, masks);
  const std::size_t roundings = 8 * (4 + 8 + 8);
  check_close(y, dy, roundings);
  const auto grads = nn::decoder_layer_backward(prm, saved, g);
  const auto dgrads = nn::decoder_layer_backward(dprm, dsaved, to_device(g));
  check_close(grads.d_input, dgrads.d_input, 2 * roundings);
  check_close(grads.d_memory, dgrads.d_memory, 2 * roundings);
  check_close(grads.d_params.cross_attn.w_qkv.data(), dgrads.d_params.cross_attn.w_qkv.data(), 2 * roundings);
  check_close(grads.d_params.ln3.gamma, dgrads.d_params.ln3.gamma, 2 * roundings);
  // the stack: two layers over one memory, whose gradient sums the layers'
  std::vector<nn::decoder_params<T, dct>> layers{prm, nn::make_decoder_params<T>(cfg, dct{}, 24)};
  std::vector<nn::decoder_params<T, dct, device_space>> dlayers{nn::copy(layers[0], device_space{}),
                                                                nn::copy(layers[1], device_space{})};
  nn::decoder_stack<T, dct> stack(std::move(layers));
  nn::decoder_stack<T, dct, device_space> dstack(std::move(dlayers));
  const auto dmemory = to_device(memory);
  stack.set_memory(memory, {4, 3});
  dstack.set_memory(dmemory, {4, 3});
  const nn::batch b{batch, {}, {3, 2}, nn::phase::train};
  check_close(stack.forward(x, b), dstack.forward(to_device(x), b), 2 * roundings);
  check_close(stack.backward(g), dstack.backward(to_device(g)), 4 * roundings);
  check_close(stack.memory_grad(), dstack.memory_grad(), 4 * roundings);
}

TEST_CASE("device checkpoints: written from one memory space, read into the other") {
  const auto c = small_text_config();
  auto host = nn::make_text_classifier<float>(c, dct{});
  auto device = nn::make_text_classifier<float>(c, dct{}, device_space{});
  const auto dir = std::filesystem::temp_directory_path() / "tprod_device_checkpoint";
  std::filesystem::create_directories(dir);
  // train the device model one step so that its parameters differ from the fresh host model's
  auto dp = nn::parameters<float>(device);
  nn::classification_step(device, device_tensor3<float>(), small_text_batch(), {0, 2, 1});
  nn::adamw<float, device_space> opt({1e-2, 0.9, 0.999, 1e-8, 0});
  nn::step(opt, dp);
  nn::save_checkpoint<float>(dir / "device.safetensors", device, {{"note", "from the device"}});
  const auto meta = nn::load_checkpoint<float>(dir / "device.safetensors", host);
  CHECK(meta.at("note") == "from the device");
  auto hp = nn::parameters<float>(host);
  for (std::size_t i = 0; i < hp.size(); ++i) {
    CAPTURE(hp.values.names[i]);
    CHECK(same(to_host(*dp.values.tensors[i]), *hp.values.tensors[i]));
  }
  // and back: a host file into a fresh device model
  nn::save_checkpoint<float>(dir / "host.safetensors", host);
  auto fresh = nn::make_text_classifier<float>(small_text_config(), dct{}, device_space{});
  nn::load_checkpoint<float>(dir / "host.safetensors", fresh);
  auto fp = nn::parameters<float>(fresh);
  for (std::size_t i = 0; i < hp.size(); ++i) CHECK(same(to_host(*fp.values.tensors[i]), *hp.values.tensors[i]));
  // the training state (parameters, AdamW's moments and step) too
  nn::save_training_state<float>(dir / "state.safetensors", device, opt, {{"step", "1"}});
  nn::adamw<float> host_opt;
  nn::load_training_state<float>(dir / "state.safetensors", host, host_opt);
  CHECK(host_opt.steps() == 1);
  CHECK(same(host_opt.first_moments().at(0), to_host(opt.first_moments().at(0))));
  std::filesystem::remove_all(dir);
}
