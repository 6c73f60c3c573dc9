// A small text classifier composed from tprod::nn layers, trained with AdamW on a synthetic task:
// token embedding → Ten_p → slice-aware positional encoding → 2 encoder layers under the L-product (DCT) →
// masked mean pooling → linear head → softmax cross-entropy. The same model with p = 1 and the identity
// transform is the standard Transformer baseline; both are trained and compared.
//
// Task: sequences of 6…16 tokens over a vocabulary of 24 (padded to 16); tokens 0–3 are "signal", the rest noise.
// The label is the signal token that occurs most often (ties go to the smaller token).
#include <cstdio>
#include <random>
#include <vector>

#include "tprod/nn.hpp"
#include "tprod/transform/dct.hpp"
#include "tprod/transform/identity_transform.hpp"

namespace nn = tprod::nn;
using tensor = tprod::tensor3<float>;

constexpr std::size_t vocab = 24, classes = 4, max_len = 16, width = 32, layers = 2, batch = 32;

struct example_batch {
  std::vector<std::size_t> tokens, labels, lengths;
};

example_batch make_batch(std::mt19937& rng) {
  example_batch b;
  std::uniform_int_distribution<std::size_t> len(6, max_len), tok(0, vocab - 1);
  for (std::size_t s = 0; s < batch; ++s) {
    const std::size_t n = len(rng);
    std::size_t count[classes] = {};
    for (std::size_t t = 0; t < max_len; ++t) {
      const std::size_t v = t < n ? tok(rng) : 0;  // padding positions hold token 0 but are masked out
      if (t < n && v < classes) ++count[v];
      b.tokens.push_back(v);
    }
    std::size_t best = 0;
    for (std::size_t c = 1; c < classes; ++c)
      if (count[c] > count[best]) best = c;
    b.labels.push_back(best);
    b.lengths.push_back(n);
  }
  return b;
}

/// The model's parameters; the gradient has the same type.
template <class L>
struct model {
  nn::embedding_params<float> embed;
  nn::sinusoidal_positional_params<float> pos;
  std::vector<nn::encoder_params<float, L>> enc;
  nn::linear_params<float, tprod::identity_transform> head;

  template <class F> void for_each(F&& f) {
    embed.for_each(f);
    pos.for_each(f);
    for (auto& e : enc) e.for_each(f);
    head.for_each(f);
  }
};

template <class L>
model<L> make_model(std::size_t p, const L& l) {
  const auto cfg = nn::paper000_config(width, 4, 2 * width, p, nn::activation::gelu);
  model<L> m{nn::make_embedding_params<float>(vocab, width, 1, 0.5f),
             nn::make_sinusoidal_positional<float>(p, nn::alpha_strategy::linear, true),
             {},
             nn::make_linear_params<float>(width, classes, 1, tprod::identity_transform{}, 2)};
  for (std::size_t i = 0; i < layers; ++i) m.enc.push_back(nn::make_encoder_params<float>(cfg, l, 10 + 20 * i));
  return m;
}

template <class L>
model<L> zeros_like(const model<L>& m) {
  model<L> z{nn::zeros_like(m.embed), m.pos, {}, nn::zeros_like(m.head)};
  z.pos.alpha = tensor(1, 1, m.pos.slices());
  for (const auto& e : m.enc) z.enc.push_back(nn::zeros_like(e));
  return z;
}

/// One forward pass (and, with grads, the backward pass); returns the loss and the number of correct predictions.
template <class L>
std::pair<float, std::size_t> step(const model<L>& m, const example_batch& b, std::size_t p, model<L>* grads) {
  const nn::attention_mask mask{false, b.lengths};
  tensor x = nn::positional_forward(m.pos, nn::embedding_forward(m.embed, b.tokens, p), batch);
  std::vector<nn::encoder_saved<float>> saved(layers);
  for (std::size_t i = 0; i < layers; ++i) std::tie(x, saved[i]) = nn::encoder_layer_forward(m.enc[i], x, batch, mask);
  const tensor pooled = nn::slices_side_by_side(nn::mean_pool_forward(x, batch, b.lengths));
  auto [logits, head_saved] = nn::linear_forward(m.head, pooled);
  const auto ce = nn::softmax_cross_entropy(logits, b.labels);
  std::size_t correct = 0;
  for (std::size_t s = 0; s < batch; ++s) correct += ce.predicted[s] == b.labels[s];
  if (grads) {
    auto gh = nn::linear_backward(m.head, head_saved, ce.d_logits);
    grads->head = std::move(gh.d_params);
    tensor dx = nn::mean_pool_backward(nn::slices_stacked(gh.d_input, p), max_len, b.lengths);
    for (std::size_t i = layers; i-- > 0;) {
      auto ge = nn::encoder_layer_backward(m.enc[i], saved[i], dx);
      grads->enc[i] = std::move(ge.d_params);
      dx = std::move(ge.d_input);
    }
    grads->pos = nn::positional_backward(m.pos, dx, batch);
    grads->embed = nn::embedding_backward(m.embed, b.tokens, dx);
  }
  return {ce.loss, correct};
}

template <class L>
void train(const char* name, std::size_t p, const L& l) {
  auto m = make_model(p, l);
  auto g = zeros_like(m);
  nn::parameter_refs<float> pr;
  nn::collect<float>(m, pr);
  std::size_t encoder_params = 0;
  for (auto& e : m.enc) encoder_params += nn::count_parameters<float>(e);
  std::printf("%s: p = %zu, %zu parameters (%zu in the encoder)\n", name, p, pr.count(), encoder_params);
  nn::adamw<float> opt({3e-3, 0.9, 0.999, 1e-8, 0.01});
  const std::size_t steps = 300;
  const nn::one_cycle schedule{3e-3, steps};
  std::mt19937 rng(7);
  for (std::size_t s = 0; s < steps; ++s) {
    const auto b = make_batch(rng);
    const auto [loss, correct] = step(m, b, p, &g);
    nn::parameter_refs<float> gr;  // collected after the backward pass: the gradient tensors were replaced
    nn::collect<float>(g, gr);
    nn::parameter_refs<float> prs;
    nn::collect<float>(m, prs);
    const double norm = nn::clip_grad_norm(gr, 1.0);
    opt.step(prs, gr, schedule(s));
    if (s % 50 == 0 || s + 1 == steps)
      std::printf("  step %3zu  loss %.4f  batch accuracy %5.1f%%  grad norm %.3f\n", s, double(loss),
                  100.0 * double(correct) / batch, norm);
  }
  std::mt19937 test_rng(12345);
  std::size_t correct = 0;
  for (int i = 0; i < 10; ++i) correct += step(m, make_batch(test_rng), p, static_cast<model<L>*>(nullptr)).second;
  std::printf("  held-out accuracy %.1f%% (chance 25%%)\n\n", 100.0 * double(correct) / (10.0 * batch));
}

int main() {
  train("L-product Transformer (DCT)", 4, tprod::dct{});
  train("standard Transformer", 1, tprod::identity_transform{});
}
