// SPDX-License-Identifier: LGPL-2.1-or-later
//
// PMU and AMU errata as data, their compensation models, and the per-board
// calibration that replaces their default parameters. The two Cortex-X2
// entries are seed 003's field measurements, not Arm-published errata; the
// AMU entries are Arm-published (Cortex-A510 2457168, Cortex-A725 3821522)
// (see Documentation/userspace-api/amupmu-tool.rst, "Errata").
#ifndef AMUPMU_ERRATA_HPP
#define AMUPMU_ERRATA_HPP

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace amupmu {

/// How an erratum's model corrects (or flags) a count.
enum class ErratumModel {
	/// hardware undercounts EC=0x00 exceptions: compensated = hw + E0 * (1 - 1/factor)
	/// (E0: EC=0x00 exceptions from a software ground truth) or hw * factor
	/// when no ground truth is given (assumes every counted one is EC=0x00)
	undercount_ec0,
	/// true = measured - min(measured * factor, companion)
	overcount_minus_companion,
	/// the counter is unreliable: figures that need it are flagged, not
	/// computed (no compensation, nothing to calibrate)
	unreliable_counter,
};

/// Which unit's counter an erratum is about.
enum class ErratumUnit {
	pmu,	///< a PMUv3 event (amupmu stat compensates or annotates it)
	amu,	///< an AMU counter (amupmu amu flags the figures that use it)
};

/// "rXpY" packed as (variant << 4) | revision, for ranges.
[[nodiscard]] constexpr unsigned revision_code(unsigned variant, unsigned revision) noexcept
{
	return (variant << 4) | revision;
}

struct Erratum {
	std::string_view id;
	std::uint8_t implementer;
	std::uint16_t part;
	std::string_view core;
	unsigned first_affected;	///< revision_code, inclusive
	unsigned last_affected;		///< revision_code, inclusive; later: "verify"
	std::uint16_t event;
	std::string_view event_name;
	ErratumModel model;
	std::string_view parameter;	///< "factor", "mem_bound_factor"
	double default_value;
	double min_value;		///< accepted parameter range (calibration)
	double max_value;
	std::uint16_t companion;	///< overcount model: the event subtracted (0: none)
	std::string_view summary;
	std::string_view provenance;
	ErratumUnit unit = ErratumUnit::pmu;
};

/// "r0p0-r2p1"
[[nodiscard]] std::string affected_range(const Erratum& e);

/// Every erratum the library knows.
[[nodiscard]] std::span<const Erratum> errata() noexcept;
/// The erratum with that id ("AMUPMU-X2-EXC_UNDEF"), or nullptr.
[[nodiscard]] const Erratum* find_erratum(std::string_view id) noexcept;

/// Whether an erratum applies to a CPU.
enum class Applicability {
	no,		///< another core, or a revision before the affected range
	yes,		///< an affected revision: compensation is applied
	verify,		///< a later revision: not applied, flagged "verify"
};
/// "no", "yes" or "verify".
[[nodiscard]] std::string_view to_string(Applicability a) noexcept;

/// Whether e applies to the CPU with that MIDR_EL1.
[[nodiscard]] Applicability applies(const Erratum& e, std::uint64_t midr) noexcept;

/// An erratum and how it applies.
struct ErratumMatch {
	const Erratum* erratum;
	Applicability applicability;
};
/// The errata that apply to midr (yes or verify).
[[nodiscard]] std::vector<ErratumMatch> errata_for(std::uint64_t midr);
/// errata_for() of one unit only.
[[nodiscard]] std::vector<ErratumMatch> errata_for(std::uint64_t midr, ErratumUnit unit);

// ---------------------------------------------------------------- models

/// EXC_UNDEF compensation. With a software count ec0 of EC=0x00
/// exceptions: hw + ec0 * (1 - 1/factor): the hardware saw ec0 / factor of
/// them. Without (nullopt): hw * factor.
[[nodiscard]] double compensate_undercount(double hw, std::optional<double> ec0, double factor) noexcept;

/// IMP_STALL_BACKEND_MCQ compensation: measured - min(measured * factor,
/// companion). Never negative for factor in [0, 1] (factor is clamped).
[[nodiscard]] double compensate_overcount(double measured, double companion, double factor) noexcept;

/// The outcome of a plausibility check, with a note when inconsistent.
struct CrossCheck {
	bool consistent = true;
	std::string note{};
};
/// Checks a compensated EXC_UNDEF against EXC_TAKEN and EXC_RETURN: every
/// undefined instruction exception is a taken exception, and returns
/// balance takes.
[[nodiscard]] CrossCheck cross_check_exc_undef(double compensated, double exc_taken, double exc_return);

// ---------------------------------------------------------------- calibration

/// One calibrated parameter of one erratum on one board.
struct CalibratedValue {
	std::string erratum{};
	double value = 0;
	unsigned runs = 0;
	double residual = 0;	///< RMS relative error of the fit

	friend bool operator==(const CalibratedValue&, const CalibratedValue&) = default;
};

/// A board's calibration file: the MIDR it was measured on and values.
struct Calibration {
	std::uint64_t midr = 0;
	std::vector<CalibratedValue> values{};

	/// The calibrated value of the erratum with that id, or nullopt.
	[[nodiscard]] std::optional<double> value(std::string_view erratum) const;
	friend bool operator==(const Calibration&, const Calibration&) = default;
};

/// $AMUPMU_CALIBRATION if set, else /var/lib/amupmu/calibration.
[[nodiscard]] std::string default_calibration_path();

/// Text form ("key = value" lines, '#' comments). Numbers with '.',
/// whatever the C or C++ locale (std::to_chars).
[[nodiscard]] std::string format_calibration(const Calibration& c);
/// Parses format_calibration()'s output (std::from_chars: any locale);
/// throws InvalidArgument naming the line on malformed input or a value
/// outside the erratum's range.
[[nodiscard]] Calibration parse_calibration(std::string_view text);
/// nullopt when the file does not exist; throws on other errors, with the
/// errno of the open(2) or read(2) that failed.
[[nodiscard]] std::optional<Calibration> load_calibration(const std::string& path);
/// Writes atomically and durably: creates the missing directories (their
/// failure is the error), writes a temporary file of its own beside path
/// (mkostemp, "path.XXXXXX"), fsyncs it, renames it over path (mode 0644)
/// and fsyncs the directory. Throws with the errno of the call that
/// failed, the temporary file removed.
void save_calibration(const Calibration& c, const std::string& path);

/// The parameter in force for an erratum on a CPU: the calibration's
/// value when it was measured on the same MIDR, else the default.
struct Parameter {
	double value = 0;
	bool calibrated = false;
};
/// The parameter in force for e on midr, with calibration c (or nullptr).
[[nodiscard]] Parameter parameter_for(const Erratum& e, std::uint64_t midr, const Calibration* c);

/// One run of the undefined-instruction microbenchmark: `injected`
/// undefined instructions (EC=0x00) and the EXC_UNDEF delta counted.
struct UndefRun {
	double injected = 0;
	double counted = 0;
};
/// Least-squares factor of injected = factor * counted (through the
/// origin). Throws InvalidArgument on no usable run.
[[nodiscard]] CalibratedValue fit_undercount(std::span<const UndefRun> runs);

/// One run of the memory-pressure kernel: the measured
/// IMP_STALL_BACKEND_MCQ and the true MCQ stalls expected without memory
/// pressure (the compute baseline's MCQ rate times the run's cycles).
struct McqRun {
	double measured = 0;
	double baseline = 0;
};
/// mem_bound_factor = mean over runs of (measured - baseline) / measured,
/// clamped to [0, 1]. Throws InvalidArgument on no usable run.
[[nodiscard]] CalibratedValue fit_overcount(std::span<const McqRun> runs);

} // namespace amupmu

#endif
