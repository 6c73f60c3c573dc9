// SPDX-License-Identifier: Apache-2.0
// Training states (nn/model/training_state.hpp): parameters, AdamW's moments and step survive a save/load round trip
// bit for bit, so that the next step after loading equals the next step of the run that saved; a weights-only
// checkpoint is not a state; a model of another shape is refused with nothing changed. nn::fit's use of the states
// (stopping and resuming a run) is tested in tests/nn/test_fit.cpp.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "../nn/model_test_util.hpp"
#include "scratch_dir.hpp"
#include "tprod/nn/model.hpp"
#include "tprod/nn/model/training_state.hpp"
#include "tprod/transform/dct.hpp"

using namespace tprod;
using tprod::test::message_of;
using tprod::test::scratch_dir;

namespace {

/// The nn tests' small text classifier (width 8, 2 layers, p = 2), or a wider one.
auto state_test_model(std::uint64_t seed, std::size_t width = 8) {
  auto c = nn_test::small_text_config(seed);
  c.width = c.hidden = width;
  return nn::make_text_classifier<double>(c, dct{});
}

/// Every gradient set to a pattern that depends on the tensor, the entry and the step, then one AdamW step.
template <class M>
void step_with_pattern(M& model, nn::adamw<double>& opt, int step) {
  auto params = nn::parameters<double>(model);
  for (std::size_t i = 0; i < params.grads.tensors.size(); ++i) {
    auto g = params.grads.tensors[i]->elements();
    for (Eigen::Index e = 0; e < g.size(); ++e) g(e) = std::sin(double(1 + i) * double(e + 1) * double(step + 1));
  }
  nn::step(opt, params, 1e-2);
}

template <class M>
std::vector<std::vector<double>> parameter_values(M& model) {
  std::vector<std::vector<double>> out;
  model.for_each_parameter([&](std::string_view, tensor3<double>& v, tensor3<double>&) {
    out.emplace_back(v.data(), v.data() + v.size());
  });
  return out;
}

std::vector<std::vector<double>> moment_values(const std::vector<tensor3<double>>& ts) {
  std::vector<std::vector<double>> out;
  for (const auto& t : ts) out.emplace_back(t.data(), t.data() + t.size());
  return out;
}

}  // namespace

TEST_CASE("training state: the next step after loading equals the next step of the run that saved it") {
  scratch_dir dir;
  auto a = state_test_model(1);
  nn::adamw<double> opt_a;
  for (int s = 0; s < 3; ++s) step_with_pattern(a, opt_a, s);
  nn::save_training_state(dir / "a.state", a, opt_a, {{"note", "three steps"}});

  auto b = state_test_model(2);
  nn::adamw<double> opt_b;
  REQUIRE(parameter_values(a) != parameter_values(b));
  const auto meta = nn::load_training_state(dir / "a.state", b, opt_b);
  CHECK(meta.at("note") == "three steps");
  CHECK(meta.at("adamw.steps") == "3");
  CHECK(opt_b.steps() == 3);
  CHECK(parameter_values(b) == parameter_values(a));
  CHECK(moment_values(opt_b.first_moments()) == moment_values(opt_a.first_moments()));
  CHECK(moment_values(opt_b.second_moments()) == moment_values(opt_a.second_moments()));

  step_with_pattern(a, opt_a, 3);
  step_with_pattern(b, opt_b, 3);
  CHECK(parameter_values(b) == parameter_values(a));  // bias corrections use the restored step: the same update, bit for bit
}

TEST_CASE("training state: before the first step it holds no moments, and loads back as such") {
  scratch_dir dir;
  auto a = state_test_model(1), b = state_test_model(2);
  nn::adamw<double> fresh, loaded;
  nn::save_training_state(dir / "fresh.state", a, fresh);
  const io::safetensors_reader r(dir / "fresh.state");
  for (const auto& name : r.names()) CHECK(name.rfind("adamw.", 0) != 0);
  nn::load_training_state(dir / "fresh.state", b, loaded);
  CHECK(loaded.steps() == 0);
  CHECK(loaded.first_moments().empty());
  CHECK(parameter_values(b) == parameter_values(a));
}

TEST_CASE("training state: a checkpoint or another model's state is refused, naming the file, changing nothing") {
  scratch_dir dir;
  auto a = state_test_model(1);
  nn::adamw<double> opt_a;
  step_with_pattern(a, opt_a, 0);
  nn::save_checkpoint<double>(dir / "weights.safetensors", a);
  nn::save_training_state(dir / "a.state", a, opt_a);

  auto b = state_test_model(2);
  const auto before = parameter_values(b);
  nn::adamw<double> opt_b;
  const std::string not_state =
      message_of<io_error>([&] { nn::load_training_state(dir / "weights.safetensors", b, opt_b); });
  CHECK(not_state.find("weights.safetensors") != std::string::npos);
  CHECK(not_state.find("not a training state") != std::string::npos);

  auto wider = state_test_model(2, 12);
  const auto wider_before = parameter_values(wider);
  CHECK_THROWS_AS(nn::load_training_state(dir / "a.state", wider, opt_b), shape_error);
  CHECK(parameter_values(wider) == wider_before);
  CHECK(parameter_values(b) == before);
  CHECK(opt_b.steps() == 0);

  // The optimizer's moments must belong to the model saved with it.
  auto other = state_test_model(3, 12);
  CHECK_THROWS_AS(nn::save_training_state(dir / "mixed.state", other, opt_a), shape_error);
}
