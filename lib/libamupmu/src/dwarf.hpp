// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Internal: what elf.cpp's Symbolizer shares with dwarf.cpp, the libdwfl
// (elfutils) reader of one ELF file's symbols and source lines, with its
// separate debug file found by build-id or .gnu_debuglink. dwarf.cpp is
// compiled only when the build has libdw (AMUPMU_HAVE_LIBDW); nothing of it
// is exported.
#ifndef AMUPMU_SRC_DWARF_HPP
#define AMUPMU_SRC_DWARF_HPP

#include <amupmu/elf.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace amupmu::detail {

/// The symbol of ascending (sorted by address) containing vaddr; of
/// symbols at one address the one with the largest size; a symbol of size
/// 0 reaches up to the next one.
[[nodiscard, gnu::visibility("hidden")]] const ElfSymbol* find_symbol(const std::vector<ElfSymbol>& ascending,
								       std::uint64_t vaddr);

/// "name+0x1c": the demangled name and the offset into the symbol.
[[nodiscard, gnu::visibility("hidden")]] std::string symbol_offset(const ElfSymbol& s, std::uint64_t vaddr);

#if AMUPMU_HAVE_LIBDW

/// One ELF file through libdwfl: its function symbols (the .symtab of the
/// file, else that of its separate debug file, else .dynsym) and the
/// source lines of its DWARF (its own or the debug file's, compressed
/// sections included). Not thread-safe (libdwfl loads lazily).
class [[gnu::visibility("hidden")]] DwarfFile {
public:
	struct Line {
		std::string file{};
		std::uint32_t line = 0;
	};

	/// nullptr when libdwfl cannot read path as an ELF file. debug_dir
	/// as SymbolizerOptions::debug_dir (checked by the caller).
	[[nodiscard]] static std::unique_ptr<DwarfFile> open(const std::string& path, const std::string& debug_dir);
	~DwarfFile();
	DwarfFile(const DwarfFile&) = delete;
	DwarfFile& operator=(const DwarfFile&) = delete;

	/// Link-time address of a file offset, through the PT_LOAD headers.
	[[nodiscard]] std::optional<std::uint64_t> vaddr_of_offset(std::uint64_t offset) const;
	/// The function symbol containing vaddr (find_symbol()).
	[[nodiscard]] const ElfSymbol* symbol(std::uint64_t vaddr) const;
	/// The line table's row for vaddr; nullopt without DWARF for it (or
	/// a row of line 0, code of no line).
	[[nodiscard]] std::optional<Line> line(std::uint64_t vaddr) const;

private:
	struct Handle;	// libdwfl's session, module and callbacks
	struct Load {
		std::uint64_t offset, vaddr, filesz;
	};
	DwarfFile() = default;

	std::unique_ptr<Handle> handle_{};
	std::vector<ElfSymbol> symbols_{};	// ascending, link-time addresses
	std::vector<Load> loads_{};
};

#endif

} // namespace amupmu::detail

#endif
