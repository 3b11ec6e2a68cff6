// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Symbols of ELF64 files (the symbol table, else the dynamic one) and the
// executable mappings of a process (/proc/PID/maps), to name sampled PCs.
#ifndef AMUPMU_ELF_HPP
#define AMUPMU_ELF_HPP

#include <amupmu/sample.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace amupmu {

struct ElfSymbol {
	std::uint64_t address = 0;	///< st_value (link-time virtual address)
	std::uint64_t size = 0;
	std::string name{};
};

/// The function symbols of one ELF64 little-endian file.
class ElfSymbols {
public:
	/// nullopt when the file cannot be read or is not ELF64 LE.
	[[nodiscard]] static std::optional<ElfSymbols> load(const std::string& path);
	/// Parses an ELF image in memory.
	[[nodiscard]] static std::optional<ElfSymbols> parse(std::string_view image);

	/// The symbol containing vaddr (size 0: up to the next symbol).
	[[nodiscard]] const ElfSymbol* lookup(std::uint64_t vaddr) const;
	/// Link-time address of a file offset, through the PT_LOAD headers.
	[[nodiscard]] std::optional<std::uint64_t> vaddr_of_offset(std::uint64_t offset) const;
	[[nodiscard]] std::size_t size() const noexcept { return symbols_.size(); }

private:
	struct Load {
		std::uint64_t offset, vaddr, filesz;
	};
	std::vector<ElfSymbol> symbols_{};	// ascending address
	std::vector<Load> loads_{};
};

/// A C++ symbol demangled without its parameter list
/// ("_ZNK1A1BclEi" -> "A::B::operator()"); other names as they are.
[[nodiscard]] std::string demangle_symbol(const std::string& name);

/// One executable mapping of /proc/PID/maps.
struct Mapping {
	std::uint32_t pid = 0;
	std::uint64_t start = 0;
	std::uint64_t end = 0;
	std::uint64_t offset = 0;
	std::string path{};

	friend bool operator==(const Mapping&, const Mapping&) = default;
};

/// The executable, file-backed mappings in a /proc/PID/maps text.
[[nodiscard]] std::vector<Mapping> parse_proc_maps(std::string_view text, std::uint32_t pid);
/// parse_proc_maps() of /proc/<pid>/maps (empty when unreadable).
[[nodiscard]] std::vector<Mapping> read_proc_maps(std::uint32_t pid);

struct Resolved {
	std::string symbol{};	///< "main+0x1c", or "" when unknown
	std::string dso{};	///< mapping path, "[kernel]", "[hypervisor]" or "[unknown]"
};

/// Names PCs of sampled processes from their mappings; ELF files are
/// loaded once per path.
///
/// Thread safety: one object per thread (resolve() fills its cache);
/// distinct objects may be used concurrently.
class Symbolizer {
public:
	void add(const Mapping& m) { maps_.push_back(m); }
	/// User-space PCs by the mappings of pid; kernel samples are
	/// "[kernel]", hypervisor ones "[hypervisor]" (no symbols for either).
	[[nodiscard]] Resolved resolve(std::uint32_t pid, std::uint64_t pc, SampleMode mode);

private:
	std::vector<Mapping> maps_{};
	std::map<std::string, std::shared_ptr<const ElfSymbols>> cache_;
};

} // namespace amupmu

#endif
