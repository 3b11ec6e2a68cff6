// SPDX-License-Identifier: GPL-2.0
// PLACEHOLDER (branch spedec only): replaced before it reaches main.
#include "spe_cmds.hpp"

namespace amupmu::cli {
namespace {
int placeholder(Args) { throw UsageError{"not built yet"}; }
} // namespace
const SpeSubcommand spe_record_command{.name = "record", .summary = "", .usage = "", .run = placeholder};
const SpeSubcommand spe_dump_command{.name = "dump", .summary = "", .usage = "", .run = placeholder};
} // namespace amupmu::cli
