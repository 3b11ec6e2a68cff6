// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/elf.hpp>

#include "dwarf.hpp"

#include <amupmu/error.hpp>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <cxxabi.h>
#include <elf.h>

namespace amupmu {

namespace {

template <typename T>
bool read_at(std::string_view image, std::uint64_t off, T& out)
{
	if (off > image.size() || sizeof(T) > image.size() - off)
		return false;
	std::memcpy(&out, image.data() + off, sizeof(T));
	return true;
}

std::string hex_offset(std::uint64_t v)
{
	char buf[24];
	std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
	return buf;
}

} // namespace

std::string demangle_symbol(const std::string& name)
{
	int status = 0;
	char* d = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
	if (status != 0 || !d)
		return name;
	std::string out{d};
	std::free(d);
	// drop the parameter list (and the cv/ref-qualifiers after it) that
	// balances the last ')'
	std::string_view rest{out};
	for (bool more = true; more;) {
		more = false;
		for (const std::string_view q : {" const", " volatile", " &&", " &", "&"})
			if (rest.ends_with(q)) {
				rest.remove_suffix(q.size());
				more = true;
			}
	}
	if (!rest.ends_with(')'))
		return out;
	const std::size_t end = rest.size();
	int depth = 0;
	for (std::size_t i = end; i-- > 0;) {
		if (out[i] == ')')
			++depth;
		else if (out[i] == '(' && --depth == 0) {
			out.resize(i);
			break;
		}
	}
	return out;
}

namespace {

bool parse_hex(std::string_view s, std::uint64_t& out)
{
	const auto r = std::from_chars(s.data(), s.data() + s.size(), out, 16);
	return r.ec == std::errc{} && r.ptr == s.data() + s.size() && !s.empty();
}

} // namespace

std::optional<ElfSymbols> ElfSymbols::load(const std::string& path)
{
	std::ifstream in{path, std::ios::binary};
	if (!in)
		return std::nullopt;
	std::stringstream ss;
	ss << in.rdbuf();
	const std::string image = ss.str();
	return parse(image);
}

std::optional<ElfSymbols> ElfSymbols::parse(std::string_view image)
{
	Elf64_Ehdr eh;
	if (!read_at(image, 0, eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return std::nullopt;

	ElfSymbols out;
	for (unsigned i = 0; i < eh.e_phnum; ++i) {
		Elf64_Phdr ph;
		if (!read_at(image, eh.e_phoff + std::uint64_t{i} * eh.e_phentsize, ph))
			return std::nullopt;
		if (ph.p_type == PT_LOAD)
			out.loads_.push_back({ph.p_offset, ph.p_vaddr, ph.p_filesz});
	}

	std::vector<Elf64_Shdr> sections(eh.e_shnum);
	for (unsigned i = 0; i < eh.e_shnum; ++i)
		if (!read_at(image, eh.e_shoff + std::uint64_t{i} * eh.e_shentsize, sections[i]))
			return std::nullopt;
	// the full symbol table when there is one, else the dynamic one
	for (const unsigned type : {SHT_SYMTAB, SHT_DYNSYM}) {
		for (const Elf64_Shdr& sh : sections) {
			if (sh.sh_type != type || sh.sh_link >= sections.size() || sh.sh_entsize != sizeof(Elf64_Sym))
				continue;
			const Elf64_Shdr& strtab = sections[sh.sh_link];
			for (std::uint64_t off = 0; off + sizeof(Elf64_Sym) <= sh.sh_size; off += sizeof(Elf64_Sym)) {
				Elf64_Sym sym;
				if (!read_at(image, sh.sh_offset + off, sym))
					break;
				if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_value == 0 ||
				    sym.st_name >= strtab.sh_size || strtab.sh_offset + sym.st_name >= image.size())
					continue;
				const char* name = image.data() + strtab.sh_offset + sym.st_name;
				const std::size_t max = image.size() - (strtab.sh_offset + sym.st_name);
				out.symbols_.push_back({sym.st_value, sym.st_size, std::string(name, strnlen(name, max))});
			}
		}
		if (!out.symbols_.empty())
			break;
	}
	std::ranges::sort(out.symbols_, {}, &ElfSymbol::address);
	return out;
}

const ElfSymbol* detail::find_symbol(const std::vector<ElfSymbol>& ascending, std::uint64_t vaddr)
{
	auto it = std::ranges::upper_bound(ascending, vaddr, {}, &ElfSymbol::address);
	if (it == ascending.begin())
		return nullptr;
	--it;
	// among symbols at the same address prefer one with a size
	const ElfSymbol* best = &*it;
	for (auto j = it; j->address == it->address; --j) {
		if (j->size > best->size)
			best = &*j;
		if (j == ascending.begin())
			break;
	}
	if (best->size ? vaddr < best->address + best->size : true)
		return best;
	return nullptr;
}

std::string detail::symbol_offset(const ElfSymbol& s, std::uint64_t vaddr)
{
	return demangle_symbol(s.name) + "+" + hex_offset(vaddr - s.address);
}

const ElfSymbol* ElfSymbols::lookup(std::uint64_t vaddr) const
{
	return detail::find_symbol(symbols_, vaddr);
}

std::optional<std::uint64_t> ElfSymbols::vaddr_of_offset(std::uint64_t offset) const
{
	for (const Load& l : loads_)
		if (offset >= l.offset && offset < l.offset + l.filesz)
			return offset - l.offset + l.vaddr;
	return std::nullopt;
}

std::vector<Mapping> parse_proc_maps(std::string_view text, std::uint32_t pid)
{
	// start-end perms offset dev inode path
	std::vector<Mapping> out;
	while (!text.empty()) {
		const std::size_t nl = text.find('\n');
		std::string_view line = text.substr(0, nl);
		text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
		std::string_view f[5];
		for (auto& field : f) {
			while (!line.empty() && line.front() == ' ')
				line.remove_prefix(1);
			const std::size_t sp = line.find(' ');
			field = line.substr(0, sp);
			line.remove_prefix(sp == std::string_view::npos ? line.size() : sp);
		}
		while (!line.empty() && line.front() == ' ')
			line.remove_prefix(1);
		const std::string_view path = line;
		const std::size_t dash = f[0].find('-');
		Mapping m;
		m.pid = pid;
		if (dash == std::string_view::npos || !parse_hex(f[0].substr(0, dash), m.start) ||
		    !parse_hex(f[0].substr(dash + 1), m.end) || !parse_hex(f[2], m.offset))
			continue;
		if (f[1].size() < 3 || f[1][2] != 'x' || path.empty() || path.front() != '/')
			continue;
		m.path = std::string{path};
		out.push_back(std::move(m));
	}
	return out;
}

std::vector<Mapping> read_proc_maps(std::uint32_t pid)
{
	std::ifstream in{"/proc/" + std::to_string(pid) + "/maps"};
	std::stringstream ss;
	ss << in.rdbuf();
	return parse_proc_maps(ss.str(), pid);
}

std::vector<ElfSymbol> parse_kallsyms(std::string_view text)
{
	// "ffff800008010000 T _text" [\t[module]]
	std::vector<ElfSymbol> out;
	bool any_address = false;
	while (!text.empty()) {
		const std::size_t nl = text.find('\n');
		const std::string_view line = text.substr(0, nl);
		text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
		const std::size_t sp1 = line.find(' ');
		if (sp1 == std::string_view::npos || sp1 + 3 > line.size() || line[sp1 + 2] != ' ')
			continue;
		const char type = line[sp1 + 1];
		std::uint64_t address = 0;
		if (!parse_hex(line.substr(0, sp1), address))
			continue;
		any_address = any_address || address != 0;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		std::string_view name = line.substr(sp1 + 3);
		name = name.substr(0, name.find('\t'));
		if (!name.empty())
			out.push_back({address, 0, std::string{name}});
	}
	if (!any_address)
		return {};
	std::ranges::stable_sort(out, {}, &ElfSymbol::address);
	for (std::size_t i = 0; i + 1 < out.size(); ++i)
		out[i].size = out[i + 1].address - out[i].address;
	// of symbols at one address the last one stays sized: lookups find it
	return out;
}

std::vector<ElfSymbol> read_kallsyms()
{
	std::ifstream in{"/proc/kallsyms"};
	std::stringstream ss;
	ss << in.rdbuf();
	return parse_kallsyms(ss.str());
}

std::vector<ElfSymbol> symbols_hit(const std::vector<ElfSymbol>& sorted, const std::vector<std::uint64_t>& pcs)
{
	std::vector<ElfSymbol> out;
	for (const std::uint64_t pc : pcs) {
		auto it = std::ranges::upper_bound(sorted, pc, {}, &ElfSymbol::address);
		if (it == sorted.begin())
			continue;
		--it;
		if (it->size && pc >= it->address + it->size)
			continue;
		if (std::ranges::find(out, it->address, &ElfSymbol::address) == out.end())
			out.push_back(*it);
	}
	std::ranges::sort(out, {}, &ElfSymbol::address);
	return out;
}

std::string srcline(const Resolved& where)
{
	if (where.line == 0 || where.file.empty())
		return {};
	const std::size_t slash = where.file.rfind('/');
	return where.file.substr(slash == std::string::npos ? 0 : slash + 1) + ":" + std::to_string(where.line);
}

struct [[gnu::visibility("hidden")]] Symbolizer::Impl {
	SymbolizerOptions options{};
	std::vector<Mapping> maps{};
	std::vector<ElfSymbol> kernel{};	// ascending
	// per path, loaded on the first PC in it: the ELF reader's symbols
	// or, with DWARF, libdwfl's file (nullptr: libdwfl cannot read it,
	// the ELF reader is asked)
	std::map<std::string, std::shared_ptr<const ElfSymbols>> elf{};
#if AMUPMU_HAVE_LIBDW
	std::map<std::string, std::unique_ptr<detail::DwarfFile>> dwarf{};
#endif

	[[nodiscard]] Resolved elf_resolve(const Mapping& m, std::uint64_t offset);
	[[nodiscard]] std::optional<Resolved> dwarf_resolve(const Mapping& m, std::uint64_t offset);
};

Resolved Symbolizer::Impl::elf_resolve(const Mapping& m, std::uint64_t offset)
{
	auto& cached = elf[m.path];
	if (!cached) {
		auto loaded = ElfSymbols::load(m.path);
		cached = std::make_shared<const ElfSymbols>(loaded ? std::move(*loaded) : ElfSymbols{});
	}
	if (const auto vaddr = cached->vaddr_of_offset(offset))
		if (const ElfSymbol* s = cached->lookup(*vaddr))
			return {detail::symbol_offset(*s, *vaddr), m.path};
	return {"", m.path};
}

std::optional<Resolved> Symbolizer::Impl::dwarf_resolve([[maybe_unused]] const Mapping& m,
							[[maybe_unused]] std::uint64_t offset)
{
#if AMUPMU_HAVE_LIBDW
	auto [it, added] = dwarf.try_emplace(m.path);
	if (added)
		it->second = detail::DwarfFile::open(m.path, options.debug_dir);
	const detail::DwarfFile* file = it->second.get();
	if (!file)
		return std::nullopt;
	Resolved out{"", m.path};
	if (const auto vaddr = file->vaddr_of_offset(offset)) {
		if (const ElfSymbol* s = file->symbol(*vaddr))
			out.symbol = detail::symbol_offset(*s, *vaddr);
		if (auto line = file->line(*vaddr)) {
			out.file = std::move(line->file);
			out.line = line->line;
		}
	}
	return out;
#else
	return std::nullopt;
#endif
}

Symbolizer::Symbolizer() : impl_{std::make_unique<Impl>()}
{
}

Symbolizer::Symbolizer(SymbolizerOptions options) : Symbolizer{}
{
	const std::string& dir = options.debug_dir;
	if (!dir.empty() && (dir.front() != '/' || dir.find(':') != std::string::npos))
		throw InvalidArgument{"symbolizer debug directory '" + dir + "': not an absolute path without ':'",
				      EINVAL};
	impl_->options = std::move(options);
}

Symbolizer::~Symbolizer() = default;
Symbolizer::Symbolizer(Symbolizer&&) noexcept = default;
Symbolizer& Symbolizer::operator=(Symbolizer&&) noexcept = default;

bool Symbolizer::dwarf_available() noexcept
{
	return AMUPMU_HAVE_LIBDW != 0;
}

bool Symbolizer::uses_dwarf() const noexcept
{
	return dwarf_available() && impl_ && impl_->options.dwarf;
}

void Symbolizer::add(const Mapping& m)
{
	impl_->maps.push_back(m);
}

void Symbolizer::set_kernel_symbols(std::vector<ElfSymbol> symbols)
{
	impl_->kernel = std::move(symbols);
	std::ranges::stable_sort(impl_->kernel, {}, &ElfSymbol::address);
}

Resolved Symbolizer::resolve(std::uint32_t pid, std::uint64_t pc, SampleMode mode)
{
	switch (mode) {
	case SampleMode::user: break;
	case SampleMode::kernel: {
		const auto& kernel = impl_->kernel;
		auto it = std::ranges::upper_bound(kernel, pc, {}, &ElfSymbol::address);
		if (it == kernel.begin())
			return {"", "[kernel]"};
		--it;
		if (it->size && pc >= it->address + it->size)
			return {"", "[kernel]"};
		return {it->name + "+" + hex_offset(pc - it->address), "[kernel]"};
	}
	case SampleMode::hv: return {"", "[hypervisor]"};
	default: return {"", "[unknown]"};
	}
	for (const Mapping& m : impl_->maps) {
		if (m.pid != pid || pc < m.start || pc >= m.end)
			continue;
		const std::uint64_t offset = pc - m.start + m.offset;
		if (uses_dwarf())
			if (auto r = impl_->dwarf_resolve(m, offset))
				return std::move(*r);
		return impl_->elf_resolve(m, offset);
	}
	return {"", "[unknown]"};
}

} // namespace amupmu
