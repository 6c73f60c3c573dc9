// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file model.hpp
/// @brief The composition API: stateful layers (the `layer` concept) that own their parameters, gradients and
/// saved state, a sequential container, the text and vision classifiers of papers 000 and 001, the decoder-only
/// language model, and the classification step. Checkpoints are in tprod/nn/model/checkpoint.hpp (link tprod::io).
/// See docs/nn/composition.md.
#include "tprod/nn/model/activation_layer.hpp"
#include "tprod/nn/model/classifier.hpp"
#include "tprod/nn/model/decoder_stack.hpp"
#include "tprod/nn/model/dropout.hpp"
#include "tprod/nn/model/encoder_stack.hpp"
#include "tprod/nn/model/input_layers.hpp"
#include "tprod/nn/model/language_model.hpp"
#include "tprod/nn/model/layer.hpp"
#include "tprod/nn/model/layer_stack.hpp"
#include "tprod/nn/model/linear_layer.hpp"
#include "tprod/nn/model/norm_layer.hpp"
#include "tprod/nn/model/pooling_layer.hpp"
#include "tprod/nn/model/sequential.hpp"

#include "tprod/nn/extern_templates.hpp"  // declares nothing unless TPROD_EXTERN_TEMPLATES (tprod::instances)
