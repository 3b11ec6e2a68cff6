// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Symbols of ELF64 files (the symbol table, else the dynamic one) and the
// executable mappings of a process (/proc/PID/maps), to name sampled PCs;
// where the library is built with elfutils' libdw, their DWARF too (source
// lines, separate debug files, compressed debug sections).
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

	friend bool operator==(const ElfSymbol&, const ElfSymbol&) = default;
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
	/// The source file of the PC as the DWARF line table names it (an
	/// absolute path when the compilation directory is known), or "" when
	/// unknown: no DWARF for it, or a Symbolizer without DWARF.
	std::string file{};
	std::uint32_t line = 0;	///< its line, 0 when unknown
};

/// perf's srcline of a PC: "<file's last path component>:<line>"
/// ("loop.c:42"), or "" when the line is unknown.
[[nodiscard]] std::string srcline(const Resolved& where);

/// The kernel's function symbols of a /proc/kallsyms text (types t, T, w,
/// W), ascending, each sized up to the next one's address (kallsyms has no
/// sizes; the last one gets 0). Empty when every address is 0: kallsyms
/// without the privilege to see them (kptr_restrict).
[[nodiscard]] std::vector<ElfSymbol> parse_kallsyms(std::string_view text);
/// parse_kallsyms() of /proc/kallsyms (empty when unreadable).
[[nodiscard]] std::vector<ElfSymbol> read_kallsyms();
/// The symbols of sorted (parse_kallsyms()) that contain one of pcs.
[[nodiscard]] std::vector<ElfSymbol> symbols_hit(const std::vector<ElfSymbol>& sorted,
						 const std::vector<std::uint64_t>& pcs);

struct SymbolizerOptions {
	/// Read DWARF through libdw when the library has it (dwarf_available()):
	/// source lines, symbol tables and lines from separate debug files.
	/// false: the ELF symbol tables of the mapped files only, no lines.
	bool dwarf = true;
	/// The global debug directory: separate debug files are looked for
	/// by build-id (DIR/.build-id/xx/rest.debug) and by .gnu_debuglink
	/// name (next to the file, in its .debug/ and in DIR/<its directory>/).
	/// Absolute, without ':'; "" for none (then only next to the file).
	std::string debug_dir = "/usr/lib/debug";
};

/// Names PCs of sampled processes from their mappings; ELF files are
/// loaded once per path.
///
/// Thread safety: one object per thread (resolve() fills its cache);
/// distinct objects may be used concurrently. Move-only; a moved-from
/// Symbolizer may only be destroyed or assigned to.
class Symbolizer {
public:
	Symbolizer();
	/// Throws InvalidArgument (EINVAL) for a debug_dir that is not
	/// absolute or holds a ':'.
	explicit Symbolizer(SymbolizerOptions options);
	~Symbolizer();
	Symbolizer(Symbolizer&&) noexcept;
	Symbolizer& operator=(Symbolizer&&) noexcept;
	Symbolizer(const Symbolizer&) = delete;
	Symbolizer& operator=(const Symbolizer&) = delete;

	/// Whether this build of the library reads DWARF (has libdw).
	[[nodiscard]] static bool dwarf_available() noexcept;
	/// Whether this object reads DWARF: options.dwarf and dwarf_available().
	[[nodiscard]] bool uses_dwarf() const noexcept;

	void add(const Mapping& m);
	/// The kernel's symbols (kallsyms'), for kernel PCs.
	void set_kernel_symbols(std::vector<ElfSymbol> symbols);
	/// User-space PCs by the mappings of pid (with their source line
	/// when uses_dwarf() and the file has DWARF); kernel samples are
	/// "[kernel]" (named by the kernel symbols when given), hypervisor ones
	/// "[hypervisor]" (no symbols).
	[[nodiscard]] Resolved resolve(std::uint32_t pid, std::uint64_t pc, SampleMode mode);

private:
	struct Impl;
	std::unique_ptr<Impl> impl_;
};

} // namespace amupmu

#endif
