// SPDX-License-Identifier: Apache-2.0
// The command table: a new subcommand is a cmd_*.cpp defining `command NAME_command()` and one line here.
#include "cli.hpp"

namespace tprod::cli {

command product_command();
command transform_command();
command transpose_command();
command inverse_command();
command identity_command();
command svd_command();
command rank_command();
command tucker_command();
command tt_command();
#ifdef TPROD_CLI_SAFETENSORS
command compress_attention_command();
#endif

const std::vector<command>& commands() {
  static const std::vector<command> table = {
      product_command(), transform_command(), transpose_command(), inverse_command(), identity_command(),
      svd_command(),     rank_command(),      tucker_command(),    tt_command(),
#ifdef TPROD_CLI_SAFETENSORS
      compress_attention_command(),
#endif
  };
  return table;
}

}  // namespace tprod::cli
