// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/bits.hpp>
#include <amupmu/cpu.hpp>
#include <amupmu/errata.hpp>
#include <amupmu/error.hpp>
#include <amupmu/events.hpp>
#include <amupmu/text/numtext.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace amupmu {

namespace {

constexpr std::string_view provenance_003 =
	"seed 003 (field measurements on Cortex-X2, not in Arm's published errata); "
	"calibrate with 'amupmu calibrate'";

constexpr Erratum table[] = {
	{
		.id = "AMUPMU-X2-EXC_UNDEF",
		.implementer = 0x41,
		.part = 0xD48,
		.core = "Cortex-X2",
		.first_affected = revision_code(0, 0),
		.last_affected = revision_code(2, 1),
		.event = ev::exc_undef,
		.event_name = "exc_undef",
		.model = ErratumModel::undercount_ec0,
		.parameter = "factor",
		.default_value = 1.21,
		.min_value = 1.0,
		.max_value = 4.0,
		.companion = 0,
		.summary = "EXC_UNDEF misses about 17 % of exceptions with ESR_ELx.EC == 0x00",
		.provenance = provenance_003,
	},
	{
		.id = "AMUPMU-X2-MCQ",
		.implementer = 0x41,
		.part = 0xD48,
		.core = "Cortex-X2",
		.first_affected = revision_code(0, 0),
		.last_affected = revision_code(2, 1),
		.event = ev::imp_stall_backend_mcq,
		.event_name = "imp_stall_backend_mcq",
		.model = ErratumModel::overcount_minus_companion,
		.parameter = "mem_bound_factor",
		// seed 003 §3.2 measured 0.28-0.35; a 38 % overcount is 0.38 / 1.38 = 0.275
		.default_value = 0.30,
		.min_value = 0.0,
		.max_value = 1.0,
		.companion = ev::stall_backend_mem,
		.summary = "IMP_STALL_BACKEND_MCQ also counts memory-bound stalls (up to 38 % high)",
		.provenance = provenance_003,
	},
	// AMU: the constant counter (group 0 counter CNT_CYCLES, AMEVCNTR01) is
	// unreliable. Linux works around 2457168 (ARM64_ERRATUM_2457168) by not
	// using the counter for frequency invariance; its A725 3821522
	// workaround came with a commit factoring out a shared "broken AMU
	// const counter" capability (commit titles only, see the provenance);
	// amupmu flags every figure that divides by it (frequency, active share).
	{
		.id = "ARM-A510-2457168",
		.implementer = 0x41,
		.part = 0xD46,
		.core = "Cortex-A510",
		.first_affected = revision_code(0, 0),
		.last_affected = revision_code(1, 1),
		.event = 0x4004,
		.event_name = "cnt_cycles",
		.model = ErratumModel::unreliable_counter,
		.parameter = "",
		.default_value = 0,
		.min_value = 0,
		.max_value = 0,
		.companion = 0,
		.summary = "AMU constant counter AMEVCNTR01 (CNT_CYCLES) increments incorrectly, "
			   "giving a significantly higher value: frequency and active share not computed",
		.provenance = "Arm Cortex-A510 Software Developer Errata Notice, erratum 2457168; "
			      "Linux ARM64_ERRATUM_2457168 (Cortex-A510 r0p0-r1p1)",
		.unit = ErratumUnit::amu,
	},
	{
		.id = "ARM-A725-3821522",
		.implementer = 0x41,
		.part = 0xD87,
		.core = "Cortex-A725",
		.first_affected = revision_code(0, 0),
		.last_affected = revision_code(0, 2),
		.event = 0x4004,
		.event_name = "cnt_cycles",
		.model = ErratumModel::unreliable_counter,
		.parameter = "",
		.default_value = 0,
		.min_value = 0,
		.max_value = 0,
		.companion = 0,
		.summary = "AMU CNT_CYCLES may incur a significant increment error on entering and leaving "
			   "WFx, diverging from the system counter: frequency and active share not computed",
		// verified: the arm64 tree's commit title (kernel.org arm64/linux
		// for-next/fixes, 2026-10-01); not verified here: the SDEN's text,
		// the affected range (the r0p0-r0p2) and the Kconfig name
		.provenance = "Arm Cortex-A725 Software Developer Errata Notice, erratum 3821522 (SDEN not "
			      "consulted; r0p0-r0p2 as the project's issue gives it); Linux arm64 commit "
			      "45f730467987 \"arm64: errata: Add Cortex-A725 erratum 3821522 workaround\" "
			      "(with 573371caf7ae \"Factor out broken AMU const counter cap\")",
		.unit = ErratumUnit::amu,
	},
};

[[noreturn]] void bad_line(unsigned line, const std::string& why)
{
	throw InvalidArgument{"calibration line " + std::to_string(line) + ": " + why, EINVAL};
}

std::string_view trim(std::string_view s)
{
	while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
		s.remove_prefix(1);
	while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
		s.remove_suffix(1);
	return s;
}

// Closes a file descriptor once.
class FdCloser {
public:
	explicit FdCloser(int fd) noexcept : fd_{fd} {}
	FdCloser(const FdCloser&) = delete;
	FdCloser& operator=(const FdCloser&) = delete;
	~FdCloser() { close(); }
	int close() noexcept
	{
		const int r = fd_ >= 0 ? ::close(fd_) : 0;
		fd_ = -1;
		return r;
	}

private:
	int fd_;
};

template <typename T>
bool parse_number(std::string_view s, T& out, int base = 10)
{
	const char* end = s.data() + s.size();
	std::from_chars_result r{};
	if constexpr (std::is_floating_point_v<T>)
		r = std::from_chars(s.data(), end, out);
	else
		r = std::from_chars(s.data(), end, out, base);
	return r.ec == std::errc{} && r.ptr == end && !s.empty();
}

} // namespace

std::span<const Erratum> errata() noexcept
{
	return table;
}

const Erratum* find_erratum(std::string_view id) noexcept
{
	for (const Erratum& e : table)
		if (e.id == id)
			return &e;
	return nullptr;
}

std::string_view to_string(Applicability a) noexcept
{
	switch (a) {
	case Applicability::yes: return "applied";
	case Applicability::verify: return "verify";
	case Applicability::no: break;
	}
	return "not applicable";
}

Applicability applies(const Erratum& e, std::uint64_t midr) noexcept
{
	const Midr m = decode_midr(midr);
	if (m.implementer != e.implementer || m.part != e.part)
		return Applicability::no;
	const unsigned rev = revision_code(m.variant, m.revision);
	if (rev < e.first_affected)
		return Applicability::no;
	return rev <= e.last_affected ? Applicability::yes : Applicability::verify;
}

std::vector<ErratumMatch> errata_for(std::uint64_t midr)
{
	std::vector<ErratumMatch> out;
	for (const Erratum& e : table)
		if (const Applicability a = applies(e, midr); a != Applicability::no)
			out.push_back({&e, a});
	return out;
}

std::vector<ErratumMatch> errata_for(std::uint64_t midr, ErratumUnit unit)
{
	std::vector<ErratumMatch> out = errata_for(midr);
	std::erase_if(out, [&](const ErratumMatch& m) { return m.erratum->unit != unit; });
	return out;
}

std::string affected_range(const Erratum& e)
{
	const auto rev = [](unsigned code) {
		return "r" + std::to_string(code >> 4) + "p" + std::to_string(code & 0xF);
	};
	return rev(e.first_affected) + "-" + rev(e.last_affected);
}

double compensate_undercount(double hw, std::optional<double> ec0, double factor) noexcept
{
	if (factor <= 0)
		return hw;
	if (ec0)
		return hw + *ec0 * (1.0 - 1.0 / factor);
	return hw * factor;
}

double compensate_overcount(double measured, double companion, double factor) noexcept
{
	factor = std::clamp(factor, 0.0, 1.0);
	const double corrected = measured - std::min(measured * factor, std::max(companion, 0.0));
	return std::max(corrected, 0.0);
}

// The cross-check of seed 003 §4.1.
CrossCheck cross_check_exc_undef(double compensated, double exc_taken, double exc_return)
{
	CrossCheck c;
	if (compensated > exc_taken) {
		c.consistent = false;
		c.note = "compensated exc_undef exceeds exc_taken: the factor is too large for this board";
	} else if (exc_taken > 0 && std::fabs(exc_taken - exc_return) > 0.01 * exc_taken + 16) {
		c.consistent = false;
		c.note = "exc_taken and exc_return differ by more than 1 %: exceptions were cut by the window";
	} else {
		c.note = "exc_undef <= exc_taken, exc_taken ~ exc_return";
	}
	return c;
}

// ---------------------------------------------------------------- calibration

std::optional<double> Calibration::value(std::string_view erratum) const
{
	for (const CalibratedValue& v : values)
		if (v.erratum == erratum)
			return v.value;
	return std::nullopt;
}

std::string default_calibration_path()
{
	if (const char* p = std::getenv("AMUPMU_CALIBRATION"); p && *p)
		return p;
	return "/var/lib/amupmu/calibration";
}

std::string format_calibration(const Calibration& c)
{
	std::string out = "# amupmu calibration (amupmu calibrate); one board, one MIDR\n";
	out += "# " + describe_midr(c.midr) + "\n";
	out += "midr = " + hex(c.midr, 8) + "\n";
	for (const CalibratedValue& v : c.values) {
		const Erratum* e = find_erratum(v.erratum);
		out += v.erratum + "." + std::string{e ? e->parameter : "value"} + " = " + text::general(v.value, 6) +
		       "\n";
		out += v.erratum + ".runs = " + text::decimal(v.runs) + "\n";
		out += v.erratum + ".residual = " + text::general(v.residual, 4) + "\n";
	}
	return out;
}

Calibration parse_calibration(std::string_view text)
{
	Calibration c;
	bool have_midr = false;
	unsigned line_no = 0;
	while (!text.empty()) {
		const std::size_t nl = text.find('\n');
		const std::string_view line = trim(text.substr(0, nl));
		text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
		++line_no;
		if (line.empty() || line.front() == '#')
			continue;
		const std::size_t eq = line.find('=');
		if (eq == std::string_view::npos)
			bad_line(line_no, "expected 'key = value'");
		const std::string_view key = trim(line.substr(0, eq));
		const std::string_view value = trim(line.substr(eq + 1));
		if (key == "midr") {
			std::uint64_t m = 0;
			if (!value.starts_with("0x") || !parse_number(value.substr(2), m, 16))
				bad_line(line_no, "midr must be 0x<hex>");
			c.midr = m;
			have_midr = true;
			continue;
		}
		const std::size_t dot = key.rfind('.');
		if (dot == std::string_view::npos)
			bad_line(line_no, "unknown key '" + std::string{key} + "'");
		const std::string_view id = key.substr(0, dot);
		const std::string_view field = key.substr(dot + 1);
		const Erratum* e = find_erratum(id);
		if (!e)
			bad_line(line_no, "unknown erratum '" + std::string{id} + "'");
		auto it = std::ranges::find(c.values, id, &CalibratedValue::erratum);
		if (it == c.values.end()) {
			c.values.push_back({.erratum = std::string{id}});
			it = c.values.end() - 1;
		}
		if (field == e->parameter) {
			double v = 0;
			if (!parse_number(value, v) || !std::isfinite(v))
				bad_line(line_no, std::string{e->parameter} + " '" + std::string{value} +
							  "' is not a number");
			if (v < e->min_value || v > e->max_value)
				bad_line(line_no, std::string{e->parameter} + " '" + std::string{value} +
							  "' outside [" + text::general(e->min_value, 6) + ", " +
							  text::general(e->max_value, 6) + "]");
			it->value = v;
		} else if (field == "runs") {
			if (!parse_number(value, it->runs))
				bad_line(line_no, "runs must be a number");
		} else if (field == "residual") {
			if (!parse_number(value, it->residual))
				bad_line(line_no, "residual must be a number");
		} else {
			bad_line(line_no, "unknown field '" + std::string{field} + "'");
		}
	}
	if (!have_midr)
		throw InvalidArgument{"calibration: no midr line", EINVAL};
	for (const CalibratedValue& v : c.values)
		if (v.value == 0 && find_erratum(v.erratum)->min_value > 0)
			throw InvalidArgument{"calibration: " + v.erratum + " has no value", EINVAL};
	return c;
}

std::optional<Calibration> load_calibration(const std::string& path)
{
	const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		const int err = errno;
		if (err == ENOENT)
			return std::nullopt;
		throw_error("open " + path, err);
	}
	const FdCloser closer{fd};
	std::string text;
	char buf[4096];
	for (;;) {
		const ssize_t n = ::read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			throw_error("read " + path, errno);
		if (n == 0)
			break;
		text.append(buf, static_cast<std::size_t>(n));
	}
	try {
		return parse_calibration(text);
	} catch (const InvalidArgument& e) {
		throw InvalidArgument{path + ": " + e.operation(), EINVAL};
	}
}

void save_calibration(const Calibration& c, const std::string& path)
{
	const std::filesystem::path p{path};
	const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path{"."};
	std::error_code ec;
	std::filesystem::create_directories(dir, ec);
	if (ec)
		throw_error("create directories " + dir.string(), ec.value());

	// a name of its own beside the file: another calibrate at the same
	// time, or a stale file from one that died, is not overwritten
	std::string tmp = path + ".XXXXXX";
	const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
	if (fd < 0)
		throw_error("create " + tmp, errno);
	FdCloser closer{fd};
	const auto fail = [&](const std::string& op, int err) {
		closer.close();
		::unlink(tmp.c_str());
		throw_error(op + " " + tmp, err);
	};
	if (::fchmod(fd, 0644) != 0)
		fail("chmod", errno);
	const std::string text = format_calibration(c);
	for (std::size_t done = 0; done < text.size();) {
		const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			fail("write", errno);
		done += static_cast<std::size_t>(n);
	}
	// the data on disk before the name points at it
	if (::fsync(fd) != 0)
		fail("fsync", errno);
	if (closer.close() != 0)
		fail("close", errno);
	if (::rename(tmp.c_str(), path.c_str()) != 0) {
		const int err = errno;
		::unlink(tmp.c_str());
		throw_error("rename " + tmp + " to " + path, err);
	}
	// and the new name itself
	const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		throw_error("open " + dir.string(), errno);
	const FdCloser dir_closer{dfd};
	if (::fsync(dfd) != 0)
		throw_error("fsync " + dir.string(), errno);
}

Parameter parameter_for(const Erratum& e, std::uint64_t midr, const Calibration* c)
{
	if (c && c->midr == midr)
		if (const auto v = c->value(e.id))
			return {*v, true};
	return {e.default_value, false};
}

CalibratedValue fit_undercount(std::span<const UndefRun> runs)
{
	double sxy = 0, sxx = 0;
	unsigned n = 0;
	for (const UndefRun& r : runs) {
		if (r.injected <= 0 || r.counted <= 0)
			continue;
		sxy += r.counted * r.injected;
		sxx += r.counted * r.counted;
		++n;
	}
	if (n == 0)
		throw InvalidArgument{"fit of EXC_UNDEF: no run counted an exception", EINVAL};
	const double factor = sxy / sxx;
	double se = 0;
	for (const UndefRun& r : runs)
		if (r.injected > 0 && r.counted > 0) {
			const double rel = (factor * r.counted - r.injected) / r.injected;
			se += rel * rel;
		}
	return {.erratum = "AMUPMU-X2-EXC_UNDEF", .value = factor, .runs = n, .residual = std::sqrt(se / n)};
}

CalibratedValue fit_overcount(std::span<const McqRun> runs)
{
	double sum = 0;
	std::vector<double> shares;
	for (const McqRun& r : runs) {
		if (r.measured <= 0)
			continue;
		shares.push_back(std::clamp((r.measured - r.baseline) / r.measured, 0.0, 1.0));
		sum += shares.back();
	}
	if (shares.empty())
		throw InvalidArgument{"fit of IMP_STALL_BACKEND_MCQ: no run measured a stall", EINVAL};
	const double mean = sum / static_cast<double>(shares.size());
	double se = 0;
	for (const double s : shares)
		se += (s - mean) * (s - mean);
	return {.erratum = "AMUPMU-X2-MCQ",
		.value = mean,
		.runs = static_cast<unsigned>(shares.size()),
		.residual = std::sqrt(se / static_cast<double>(shares.size()))};
}

} // namespace amupmu
