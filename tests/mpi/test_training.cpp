// SPDX-License-Identifier: Apache-2.0
// Distributed training against one process: the spectral model-parallel classifier (each rank its slices of the
// encoder) and nn::fit in its data- and model-parallel forms, step by step and over whole runs, in double within
// 1e-12 of the scale. p = 3 slices: uneven blocks on 2 ranks, a rank with no slice on 4.
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "../nn/model_test_util.hpp"
#include "tprod/distributed/model_parallel.hpp"
#include "tprod/nn/model/fit.hpp"
#include "tprod_test.hpp"

namespace {

using namespace tprod;
namespace dist = tprod::distributed;

/// The small text classifier of the nn tests at p = 3 (d = 12, H = 3), with dropout (the same masks on every rank).
nn::text_classifier_config config(double dropout) {
  auto c = nn_test::small_text_config();
  c.width = 12;
  c.heads = 3;
  c.hidden = 12;
  c.slices = 3;
  c.dropout = dropout;
  return c;
}

/// Its encoder layers with the transform-domain LayerNorm, which keeps the slices apart.
std::vector<nn::encoder_params<double, dct>> slice_separable_layers(const nn::text_classifier_config& c) {
  auto cfg = nn::paper000_config(c.width, c.heads, c.hidden, c.slices, c.act);
  cfg.norm = nn::layer_norm_kind::transform_domain;
  return nn::make_encoder_layers<double>(cfg, c.layers, dct{}, c.seed + 100);
}

/// 12 sequences of up to 5 tokens with labels, as nn::fit's make_train takes them.
nn::labelled_batch<double> examples(const std::vector<std::size_t>& idx) {
  nn::labelled_batch<double> b;
  b.info.size = idx.size();
  for (const std::size_t i : idx) {
    for (std::size_t t = 0; t < 5; ++t) b.info.tokens.push_back((i * 7 + t * 3 + 1) % 11);
    b.info.lengths.push_back(2 + i % 4);
    b.labels.push_back((i * 5) % 3);
  }
  return b;
}

/// Every parameter of `model` against the one-process model's; with `slices`, the encoder's are this rank's slices.
template <class Model, class One>
void check_parameters(Model& model, One& one, const std::optional<dist::block_partition>& slices, int rank) {
  auto mine = nn::parameters<double>(model), whole = nn::parameters<double>(one);
  std::size_t j = 0;
  for (std::size_t i = 0; i < whole.size(); ++i) {
    const std::string& name = whole.values.names[i];
    const bool sharded = slices && name.starts_with("encoder.");
    if (sharded && slices->size(rank) == 0) continue;
    REQUIRE(j < mine.size());
    CAPTURE(name);
    CHECK(mine.values.names[j] == name);
    tensor3<double> expected = *whole.values.tensors[i];
    if (sharded) {
      tensor3<double> part(expected.m(), expected.n(), slices->size(rank));
      for (std::size_t k = 0; k < part.p(); ++k) part.slice(k) = expected.slice(slices->begin(rank) + k);
      expected = part;
    }
    CHECK(test::max_diff(*mine.values.tensors[j], expected) <= 1e-12 * (1 + test::max_abs(expected)));
    ++j;
  }
  CHECK(j == mine.size());
}

/// Whether a double is the same on every rank, to the bit.
bool same_on_every_rank(const dist::communicator& comm, double x) {
  double both[2] = {x, -x};
  MPI_Allreduce(MPI_IN_PLACE, both, 2, MPI_DOUBLE, MPI_MAX, comm.get());
  return both[0] == -both[1];
}

}  // namespace

TEST_CASE("distributed: the spectral model-parallel classifier's steps equal the one-process model's") {
  const dist::communicator comm;
  const auto c = config(0.1);
  auto one = nn::make_text_classifier<double>(c, slice_separable_layers(c));
  auto model = dist::make_spectral_text_classifier<double>(comm, c, slice_separable_layers(c));
  const auto& slices = model.get<3>().slices();
  auto one_params = nn::parameters<double>(one), params = nn::parameters<double>(model);
  nn::adamw<double> one_opt, opt;
  const auto d = dist::model_parallel(comm);
  const auto b = examples({0, 1, 2, 3, 4});
  for (std::uint64_t step = 0; step < 3; ++step) {
    auto info = b.info;
    info.pass = step;
    const auto r1 = nn::classification_step(one, tensor3<double>(), info, b.labels);
    const auto r = nn::classification_step(model, tensor3<double>(), info, b.labels);
    CHECK(std::abs(r.loss - r1.loss) <= 1e-12 * (1 + std::abs(r1.loss)));
    CHECK(same_on_every_rank(comm, r.loss));
    const double n1 = nn::clip_grad_norm(one_params.grads, 0.5);
    const double n = nn::detail::clip_grad_norm(params, 0.5, d);  // the global norm, over every rank's slices
    CHECK(std::abs(n - n1) <= 1e-12 * n1);
    nn::step(one_opt, one_params);
    nn::step(opt, params);
    one_params.zero_grad();
    params.zero_grad();
  }
  check_parameters(model, one, slices, comm.rank());
  // The activations summed over the ranks: 2 per step (forward and backward) of B·T·d values each.
  CHECK(model.get<3>().values_communicated() == 3 * 2 * 5 * 5 * c.width);
  // Evaluation: the logits on every rank are the one-process ones.
  nn::batch eval = b.info;
  eval.mode = nn::phase::eval;
  const auto& expected = one.forward(tensor3<double>(), eval);
  const auto& logits = model.forward(tensor3<double>(), eval);
  CHECK(test::max_diff(logits, expected) <= 1e-12 * (1 + test::max_abs(expected)));
}

TEST_CASE("distributed: nn::fit trains model- and data-parallel to the one-process run") {
  const dist::communicator comm;
  nn::fit_options o;
  o.epochs = 2;
  o.batch_size = 5;  // 12 examples: batches of 5, 5 and 2, shares that are empty on some ranks
  o.quiet = true;
  o.clip = 0.5;
  SUBCASE("model-parallel, with dropout") {
    const auto c = config(0.1);
    auto one = nn::make_text_classifier<double>(c, slice_separable_layers(c));
    const auto r1 = nn::fit<double>(one, "one", 12, examples, 7, examples, o);
    auto model = dist::make_spectral_text_classifier<double>(comm, c, slice_separable_layers(c));
    o.distribution = dist::model_parallel(comm);
    const auto r = nn::fit<double>(model, "spectral", 12, examples, 7, examples, o);
    CHECK(std::abs(r.test_loss - r1.test_loss) <= 1e-12 * r1.test_loss);
    CHECK(r.test_accuracy == r1.test_accuracy);
    check_parameters(model, one, model.get<3>().slices(), comm.rank());
    // The parameters every rank holds stay equal to the bit (the summed activations are the same everywhere).
    const auto params = nn::parameters<double>(model);
    for (std::size_t i = 0; i < params.size(); ++i)
      if (!params.values.names[i].starts_with("encoder."))
        CHECK(same_on_every_rank(comm, test::max_abs(*params.values.tensors[i])));
  }
  SUBCASE("data-parallel, without dropout (each rank draws masks for its share only)") {
    const auto c = config(0);
    auto one = nn::make_text_classifier<double>(c, dct{});
    const auto r1 = nn::fit<double>(one, "one", 12, examples, 7, examples, o);
    auto model = nn::make_text_classifier<double>(c, dct{});
    o.distribution = dist::data_parallel(comm);
    const auto r = nn::fit<double>(model, "data", 12, examples, 7, examples, o);
    CHECK(std::abs(r.train_loss - r1.train_loss) <= 1e-12 * r1.train_loss);
    CHECK(std::abs(r.test_loss - r1.test_loss) <= 1e-12 * r1.test_loss);
    CHECK(r.test_accuracy == r1.test_accuracy);
    check_parameters(model, one, std::nullopt, comm.rank());
  }
}

TEST_CASE("distributed: model-parallel training states are written per rank and resume to the same run") {
  const dist::communicator comm;
  int pid = ::getpid();
  MPI_Bcast(&pid, 1, MPI_INT, 0, comm.get());  // one folder for all ranks: named by rank 0's process
  const auto folder = std::filesystem::temp_directory_path() / ("tprod-mpi-state-" + std::to_string(pid));
  if (comm.rank() == 0) std::filesystem::create_directories(folder);
  MPI_Barrier(comm.get());
  const auto c = config(0.1);
  nn::fit_options o;
  o.epochs = 2;
  o.batch_size = 4;
  o.quiet = true;
  o.distribution = dist::model_parallel(comm);
  o.state_file = folder / "whole.safetensors";
  auto whole = dist::make_spectral_text_classifier<double>(comm, c, slice_separable_layers(c));
  const auto r_whole = nn::fit<double>(whole, "whole", 12, examples, 7, examples, o);
  const std::string mine = comm.size() == 1 ? "whole.safetensors"
                                            : "whole.rank" + std::to_string(comm.rank()) + "-of-" +
                                                  std::to_string(comm.size()) + ".safetensors";
  CHECK(std::filesystem::exists(folder / mine));
  // The same run stopped after its first epoch (the callback throws on every rank), then resumed.
  o.state_file = folder / "stopped.safetensors";
  struct stop {};
  auto first = dist::make_spectral_text_classifier<double>(comm, c, slice_separable_layers(c));
  CHECK_THROWS_AS(
      nn::fit<double>(first, "first", 12, examples, 7, examples, o, [](const nn::epoch_report&) { throw stop{}; }),
      stop);
  auto resumed = dist::make_spectral_text_classifier<double>(comm, c, slice_separable_layers(c));
  o.resume = true;
  const auto r = nn::fit<double>(resumed, "resumed", 12, examples, 7, examples, o);
  CHECK(r.test_loss == r_whole.test_loss);
  CHECK(r.train_loss == r_whole.train_loss);
  MPI_Barrier(comm.get());
  if (comm.rank() == 0) std::filesystem::remove_all(folder);
}

TEST_CASE("distributed: layers that mix the slices and inputs that differ stop every rank with one message") {
  const dist::communicator comm;
  const auto c = config(0);
  // paper 000's original-domain LayerNorm (what make_text_classifier uses) mixes the slices.
  CHECK_THROWS_WITH_AS(
      dist::make_spectral_text_classifier<double>(
          comm, c,
          nn::make_encoder_layers<double>(nn::paper000_config(c.width, c.heads, c.hidden, c.slices), 1, dct{}, 1)),
      doctest::Contains("original domain"), distributed_error);
  // One rank's batch differs in length: every rank throws instead of waiting in the sum.
  auto model = dist::make_spectral_text_classifier<double>(comm, c, slice_separable_layers(c));
  auto b = examples({0, 1, 2});
  if (comm.size() > 1 && comm.rank() == comm.size() - 1) b = examples({0, 1});
  if (comm.size() > 1)
    CHECK_THROWS_WITH_AS(model.forward(tensor3<double>(), b.info), doctest::Contains("differ across the ranks"),
                         distributed_error);
}

TEST_CASE("distributed: a causal encoder stays causal when its slices are spread over the ranks") {
  const dist::communicator comm;
  const auto c = config(0.0);
  nn::encoder_stack<double, dct> whole(slice_separable_layers(c));
  whole.causal = true;  // a language model's stack: token t sees only tokens u ≤ t
  dist::spectral_encoder_stack<double, dct> spread(comm, whole);
  const std::size_t batch = 2, length = 5;
  const auto x = tprod::random_tensor3<double>(batch * length, whole[0].config.width, c.slices, 7);
  nn::batch b;
  b.size = batch;
  b.mode = nn::phase::eval;
  const tensor3<double> expected = whole.forward(x, b);
  const auto& y = spread.forward(x, b);
  CHECK(test::max_diff(y, expected) <= 1e-12 * (1 + test::max_abs(expected)));
  whole.causal = false;  // and the mask matters here: without it the outputs differ
  CHECK(test::max_diff(whole.forward(x, b), expected) > 1e-6);
}
