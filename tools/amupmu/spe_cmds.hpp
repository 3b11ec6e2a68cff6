// SPDX-License-Identifier: GPL-2.0
//
// The subcommands of "amupmu spe" beyond claim/release, each in its own
// file: record and dump (cmd_spe_record.cpp), knobs (cmd_spe_knobs.cpp),
// report (cmd_spe_report.cpp). cmd_spe.cpp dispatches to them with the
// arguments after the subcommand's name; each answers its own --help.
#ifndef AMUPMU_TOOL_SPE_CMDS_HPP
#define AMUPMU_TOOL_SPE_CMDS_HPP

#include "cli.hpp"

namespace amupmu::cli {

struct SpeSubcommand {
	std::string_view name;
	std::string_view summary;	///< one line for "amupmu spe --help"
	std::string_view usage;		///< "amupmu spe <name> --help"
	int (*run)(Args args);
};

extern const SpeSubcommand spe_record_command;
extern const SpeSubcommand spe_report_command;
extern const SpeSubcommand spe_dump_command;
extern const SpeSubcommand spe_knobs_command;

} // namespace amupmu::cli

#endif
