// SPDX-License-Identifier: Apache-2.0
// The FLOP models (flop_count.hpp) against the multiply-adds the layers actually issue (mac_counter), and the
// papers' printed formulas against both: paper 000's Table 2 and paper 001's eq. 6.10–6.12.
#include <doctest/doctest.h>

#include "nn_test_util.hpp"
#include "tprod/nn/decoder.hpp"
#include "tprod/nn/encoder.hpp"
#include "tprod/nn/flop_count.hpp"
#include "tprod/nn/linear.hpp"
#include "tprod/nn/mac_counter.hpp"
#include "tprod/transform/dct.hpp"

using namespace nn_test;
namespace nn = tprod::nn;
using tprod::random_tensor3;

namespace {

constexpr std::size_t batch = 3, tokens = 5;

/// The multiply-adds of f().
template <class F>
double counted(F&& f) {
  nn::mac_counter macs;
  f();
  return double(macs.count());
}

void check_encoder(const nn::layer_config& cfg) {
  CAPTURE(cfg.width);
  CAPTURE(cfg.slices);
  CAPTURE(int(cfg.attention));
  const auto prm = nn::make_encoder_params<double>(cfg, tprod::dct{}, 7);
  const t3 x = random_tensor3<double>(batch * tokens, cfg.width, cfg.slices, 8);
  const auto model = nn::encoder_layer_macs(cfg, tokens);
  std::pair<t3, nn::encoder_saved<double>> fwd;
  CHECK(counted([&] { fwd = nn::encoder_layer_forward(prm, x, batch); }) == batch * model.gemm());
  // The backward pass computes dW and dX of every product: twice the forward's GEMM work.
  CHECK(counted([&] { (void)nn::encoder_layer_backward(prm, fwd.second, fwd.first); }) == 2 * batch * model.gemm());
}

}  // namespace

TEST_CASE("flop_count: the encoder layer's model equals the multiply-adds it issues") {
  for (std::size_t p : {1, 2, 4}) check_encoder(nn::paper000_config(16, 4, 64, p));
  check_encoder(nn::paper001_config(8, 3, 2, 2));  // pre-norm, transform-domain LayerNorm, t-softmax
  auto dimension_wise = nn::paper000_config(12, 6, 24, 3);
  dimension_wise.attention = nn::attention_variant::dimension_wise;
  check_encoder(dimension_wise);
}

TEST_CASE("flop_count: the decoder layer (cross-attention over a longer source) and the L-linear layer") {
  const auto cfg = nn::paper000_config(8, 2, 16, 2);
  const auto prm = nn::make_decoder_params<double>(cfg, tprod::dct{}, 3);
  const std::size_t source = 7;
  const t3 x = random_tensor3<double>(batch * tokens, cfg.width, cfg.slices, 4);
  const t3 memory = random_tensor3<double>(batch * source, cfg.width, cfg.slices, 5);
  CHECK(counted([&] { (void)nn::decoder_layer_forward(prm, x, memory, batch); }) ==
        batch * nn::decoder_layer_macs(cfg, tokens, source).gemm());

  const auto lin = nn::make_linear_params<double>(6, 10, 3, tprod::dct{}, 9);
  const t3 xl = random_tensor3<double>(batch * tokens, 6, 3, 10);
  CHECK(counted([&] { (void)nn::linear_forward(lin, xl); }) == nn::linear_macs(batch * tokens, 6, 10, 3));
}

TEST_CASE("flop_count: paper 000's Table 2 is the encoder layer's work with one transform pass") {
  for (std::size_t p : {1, 2, 4, 8})
    for (std::size_t t : {32, 128, 512}) {
      CAPTURE(p);
      CAPTURE(t);
      const auto cfg = nn::paper000_config(768, 8, 4 * 768, p);
      const auto m = nn::encoder_layer_macs(cfg, t);
      CHECK(m.projections == 4.0 * t * 768 * 768 / p);
      CHECK(m.ffn == 8.0 * t * 768 * 768 / p);
      CHECK(m.attention == 2.0 * t * t * 768);  // unchanged by the L-product
      CHECK(m.gemm() + nn::transform_pass_macs(cfg, t) == doctest::Approx(nn::paper000_layer_macs(t, 768, p)).epsilon(1e-15));
      CHECK(m.transform == doctest::Approx(4 * nn::transform_pass_macs(cfg, t)).epsilon(1e-15));
    }
  // Remark 9: the 1/p saving holds where d ≫ T and fades where T ≫ d.
  CHECK(nn::paper000_layer_macs(128, 768, 4) / nn::paper000_layer_macs(128, 768, 1) < 0.3);
  CHECK(nn::paper000_layer_macs(8192, 768, 4) / nn::paper000_layer_macs(8192, 768, 1) > 0.7);
}

TEST_CASE("flop_count: paper 001's eq. 6.10-6.12 as printed, and the ratio of the layers' actual work") {
  const std::size_t d = 16, c = 4, r_ff = 4, n = 50;  // docs/examples/tcp_vit.md's setting
  const auto tcp = nn::encoder_layer_macs(nn::paper001_config(d, c, 4, r_ff), n);
  auto std_cfg = nn::paper001_config(d * c, 1, 4, r_ff);
  std_cfg.norm = nn::layer_norm_kind::original_domain;
  const auto standard = nn::encoder_layer_macs(std_cfg, n);
  // Eq. 6.10 counts projections and attention in FLOPs (2·MACs) but the FFN in MACs.
  const double ffn_macs = 2.0 * r_ff * d * d * n * c;
  CHECK(nn::paper001_tcp_vit_layer_flops(n, d, c, r_ff) == 2 * tcp.gemm() - ffn_macs);
  CHECK(nn::paper001_std_layer_flops(n, d, c, r_ff) == 2 * standard.gemm() - ffn_macs * c);
  CHECK(nn::paper001_flop_ratio(n, d, c, r_ff) ==
        doctest::Approx(nn::paper001_tcp_vit_layer_flops(n, d, c, r_ff) / nn::paper001_std_layer_flops(n, d, c, r_ff))
            .epsilon(1e-14));
  CHECK(nn::paper001_flop_ratio(n, d, c, r_ff) == doctest::Approx(456.0 / 1224.0).epsilon(1e-14));
  // With the FFN in FLOPs too: α' = (8 + 4r_ff)·d.
  CHECK(nn::tcp_vit_flop_ratio(n, d, c, r_ff) == doctest::Approx(tcp.gemm() / standard.gemm()).epsilon(1e-14));
  CHECK(nn::tcp_vit_flop_ratio(n, d, c, r_ff) == doctest::Approx(584.0 / 1736.0).epsilon(1e-14));
}

TEST_CASE("flop_count: an encoder stack is its layers' sum") {
  const auto cfg = nn::paper000_config(128, 4, 512, 4);
  const auto one = nn::encoder_layer_macs(cfg, 128), four = nn::encoder_macs(cfg, 128, 4);
  CHECK(four.total() == 4 * one.total());
  CHECK(four.gemm() == 4 * one.gemm());
}
