// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The libdwfl (elfutils) reader of one ELF file: dwarf.hpp. Compiled only
// when the build has libdw (AMUPMU_HAVE_LIBDW).
#include "dwarf.hpp"

#include <algorithm>

#include <elfutils/libdwfl.h>
#include <gelf.h>

namespace amupmu::detail {

// One Dwfl session per file, the file reported at its link-time addresses
// (an ET_DYN at base 0 with its p_vaddr, an ET_EXEC where it is linked):
// module addresses are link-time addresses plus bias (0 but for prelinked
// libraries). libdwfl keeps pointers to the callbacks and to the
// debuginfo_path string: they live as long as the session.
struct DwarfFile::Handle {
	std::string debuginfo_path{};
	char* debuginfo_path_ptr = nullptr;
	Dwfl_Callbacks callbacks{};
	Dwfl* dwfl = nullptr;
	Dwfl_Module* module = nullptr;
	Dwarf_Addr bias = 0;

	Handle() = default;
	Handle(const Handle&) = delete;
	Handle& operator=(const Handle&) = delete;
	~Handle()
	{
		if (dwfl)
			dwfl_end(dwfl);
	}
};

DwarfFile::~DwarfFile() = default;

std::unique_ptr<DwarfFile> DwarfFile::open(const std::string& path, const std::string& debug_dir)
{
	std::unique_ptr<DwarfFile> out{new DwarfFile};
	out->handle_ = std::make_unique<Handle>();
	Handle& h = *out->handle_;
	// elfutils' path list (dwfl_standard_find_debuginfo): "" the file's own
	// directory, ".debug" its subdirectory, then the absolute debug
	// directory (its .build-id/ tree, and the file's directory under it)
	h.debuginfo_path = debug_dir.empty() ? ":.debug" : ":.debug:" + debug_dir;
	h.debuginfo_path_ptr = h.debuginfo_path.data();
	h.callbacks.find_elf = dwfl_build_id_find_elf;
	h.callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
	h.callbacks.section_address = dwfl_offline_section_address;
	h.callbacks.debuginfo_path = &h.debuginfo_path_ptr;
	h.dwfl = dwfl_begin(&h.callbacks);
	if (!h.dwfl)
		return nullptr;
	dwfl_report_begin(h.dwfl);
	h.module = dwfl_report_elf(h.dwfl, path.c_str(), path.c_str(), -1, 0, true);
	if (dwfl_report_end(h.dwfl, nullptr, nullptr) != 0 || !h.module)
		return nullptr;
	Elf* elf = dwfl_module_getelf(h.module, &h.bias);
	if (!elf)
		return nullptr;

	std::size_t phnum = 0;
	if (elf_getphdrnum(elf, &phnum) != 0)
		return nullptr;
	for (std::size_t i = 0; i < phnum; ++i) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, static_cast<int>(i), &ph) && ph.p_type == PT_LOAD)
			out->loads_.push_back({ph.p_offset, ph.p_vaddr, ph.p_filesz});
	}

	// the function symbols as ElfSymbols::parse() takes them, from the
	// table libdwfl picks: the file's .symtab, else the debug file's,
	// else .dynsym (with a MiniDebugInfo .gnu_debugdata table added)
	const int n = dwfl_module_getsymtab(h.module);
	for (int i = 1; i < n; ++i) {
		GElf_Sym sym;
		GElf_Addr addr = 0;
		GElf_Word shndx = 0;
		const char* name = dwfl_module_getsym_info(h.module, i, &sym, &addr, &shndx, nullptr, nullptr);
		if (!name || GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_value == 0 || shndx == SHN_UNDEF)
			continue;
		out->symbols_.push_back({addr - h.bias, sym.st_size, name});
	}
	std::ranges::sort(out->symbols_, {}, &ElfSymbol::address);
	return out;
}

std::optional<std::uint64_t> DwarfFile::vaddr_of_offset(std::uint64_t offset) const
{
	for (const Load& l : loads_)
		if (offset >= l.offset && offset < l.offset + l.filesz)
			return offset - l.offset + l.vaddr;
	return std::nullopt;
}

const ElfSymbol* DwarfFile::symbol(std::uint64_t vaddr) const
{
	return find_symbol(symbols_, vaddr);
}

std::optional<DwarfFile::Line> DwarfFile::line(std::uint64_t vaddr) const
{
	// loads the DWARF on first use: the file's own, else the debug file
	// found by build-id or .gnu_debuglink (libdw inflates compressed
	// sections)
	Dwfl_Line* row = dwfl_module_getsrc(handle_->module, vaddr + handle_->bias);
	if (!row)
		return std::nullopt;
	int line = 0;
	const char* file = dwfl_lineinfo(row, nullptr, &line, nullptr, nullptr, nullptr);
	if (!file || line <= 0)
		return std::nullopt;
	return Line{file, static_cast<std::uint32_t>(line)};
}

} // namespace amupmu::detail
