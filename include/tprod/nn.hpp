// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file nn.hpp
/// @brief Umbrella of the nn area: Transformer layers under the L-product as forward/backward functions with
/// explicit saved state (papers 000 and 001), losses, optimizers, schedules, parameter and
/// compute counts.
#include "tprod/nn/activation.hpp"
#include "tprod/nn/attention.hpp"
#include "tprod/nn/attention_kinds.hpp"
#include "tprod/nn/decoder.hpp"
#include "tprod/nn/embedding.hpp"
#include "tprod/nn/encoder.hpp"
#include "tprod/nn/ffn.hpp"
#include "tprod/nn/flop_count.hpp"
#include "tprod/nn/layer_config.hpp"
#include "tprod/nn/layer_norm.hpp"
#include "tprod/nn/learned_transform.hpp"
#include "tprod/nn/linear.hpp"
#include "tprod/nn/loss.hpp"
#include "tprod/nn/mac_counter.hpp"
#include "tprod/nn/multilinear_attention.hpp"
#include "tprod/nn/nn_concepts.hpp"
#include "tprod/nn/optim.hpp"
#include "tprod/nn/param_count.hpp"
#include "tprod/nn/patchify.hpp"
#include "tprod/nn/pooling.hpp"
#include "tprod/nn/positional.hpp"
#include "tprod/nn/schedule.hpp"
#include "tprod/nn/t_attention.hpp"
#include "tprod/nn/tensorize.hpp"

#include "tprod/nn/extern_templates.hpp"  // declares nothing unless TPROD_EXTERN_TEMPLATES (tprod::instances)
