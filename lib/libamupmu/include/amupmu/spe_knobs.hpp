// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The SPE filter defaults in debugfs, /sys/kernel/debug/arm_spe/ (the
// values an SPE session takes with SpeConfig::use_defaults): one file per
// register field, Documentation/admin-guide/amupmu.rst "SPE filter
// defaults". The driver checks every write as it checks a session's
// configuration; this reads and writes them by name. Every function takes
// the directory (spe_knobs_dir on a running system, a directory of the same
// shape in tests); the files are root's.
#ifndef AMUPMU_SPE_KNOBS_HPP
#define AMUPMU_SPE_KNOBS_HPP

#include <amupmu/error.hpp>
#include <amupmu/spe_session.hpp>

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace amupmu {

inline constexpr std::string_view spe_knobs_dir = "/sys/kernel/debug/arm_spe";

/// One knob: its file name and the register field it holds.
struct SpeKnob {
	std::string_view name;		///< e.g. "pmsfcr_ft"
	std::string_view field;		///< e.g. "PMSFCR_EL1.FT: filter by type"
};

/// Every knob, in the admin guide's order. The directory's other files
/// (config, cpuN/) are read-only information, not knobs.
[[nodiscard]] std::span<const SpeKnob> spe_knobs() noexcept;
/// The knob of that name, or nullptr.
[[nodiscard]] const SpeKnob* find_spe_knob(std::string_view name) noexcept;

struct SpeKnobValue {
	std::string name;
	std::string value;	///< as the file reads, without the newline

	friend bool operator==(const SpeKnobValue&, const SpeKnobValue&) = default;
};

/// One knob's value. Throws InvalidArgument for a name that is not a
/// knob, and the read's errno (naming the file) otherwise: DeviceMissing
/// when the directory is absent (the message says why it may be),
/// PermissionDenied without root.
[[nodiscard]] std::string read_spe_knob(const std::filesystem::path& dir, std::string_view name);
/// Every knob the directory has, in spe_knobs() order (a knob whose file
/// is absent, from an older driver, is left out). Throws as read_spe_knob().
[[nodiscard]] std::vector<SpeKnobValue> read_spe_knobs(const std::filesystem::path& dir);

/// One "NAME=VALUE".
struct SpeKnobAssignment {
	std::string name;
	std::string value;
};

/// The knob write failed: errnum() is the write's errno, what()
/// "arm_spe knob NAME=VALUE: <errno text> -- <what the driver means>".
class SpeKnobRefused : public Error {
public:
	SpeKnobRefused(const std::string& name, const std::string& value, int err, const std::string& rollback);
};

/// What a refused knob write's errno means ("" for one it never returns).
[[nodiscard]] std::string_view spe_knob_errno_meaning(int err) noexcept;

/// Writes the assignments in order. First, before any write: every name
/// must be a knob and every value a number as the driver reads it
/// (decimal, 0x hex or 0 octal, up to 2^64 - 1), else InvalidArgument
/// naming it and nothing is written. When the driver refuses a write
/// (SpeKnobRefused), the knobs written before it get their earlier values
/// back, in reverse order, so that a refused list changes nothing (the
/// message says if a restore failed too).
void write_spe_knobs(const std::filesystem::path& dir, std::span<const SpeKnobAssignment> assignments);

/// The configuration a session given AMUPMU_SPE_CFG_DEFAULTS takes, from
/// the directory's read-only "config" file ("pmsfcr=0x.. pmsevfr=0x..
/// pmsnevfr=0x.. pmslatfr=0x.. pmsirr=0x.."): given with pmsfcr, pmsevfr,
/// pmsnevfr, min_latency (PMSLATFR_EL1.MINLAT), interval (PMSIRR_EL1
/// [31:8]) and AMUPMU_SPE_CFG_JITTER (PMSIRR_EL1.RND) filled in, the
/// DEFAULTS flag kept. given itself when it does not ask for the defaults.
/// Throws as read_spe_knob(), and InvalidArgument when the file does not
/// read as that line.
[[nodiscard]] SpeRecordedConfig resolve_spe_defaults(const std::filesystem::path& dir,
						     const SpeRecordedConfig& given);

} // namespace amupmu

#endif
