// SPDX-License-Identifier: GPL-2.0
//
// The subcommands of "amupmu spe" beyond claim/release, each in its own
// file: record and dump (cmd_spe_record.cpp), knobs (cmd_spe_knobs.cpp),
// report (cmd_spe_report.cpp): the subcommands of spe_command
// (cmd_spe.cpp), Commands as the others.
#ifndef AMUPMU_TOOL_SPE_CMDS_HPP
#define AMUPMU_TOOL_SPE_CMDS_HPP

#include "cli.hpp"

namespace amupmu::cli {

extern const Command spe_record_command;
extern const Command spe_report_command;
extern const Command spe_dump_command;
extern const Command spe_knobs_command;

} // namespace amupmu::cli

#endif
