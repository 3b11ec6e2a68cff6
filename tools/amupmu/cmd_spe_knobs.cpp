// SPDX-License-Identifier: GPL-2.0
// PLACEHOLDER (branch spedec only): replaced before it reaches main.
#include "spe_cmds.hpp"

namespace amupmu::cli {
namespace {
int placeholder(Args) { throw UsageError{"not built yet"}; }
} // namespace
const SpeSubcommand spe_knobs_command{.name = "knobs", .summary = "", .usage = "", .run = placeholder};
} // namespace amupmu::cli
