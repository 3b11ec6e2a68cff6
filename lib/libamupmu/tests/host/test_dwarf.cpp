// SPDX-License-Identifier: GPL-2.0
//
// The Symbolizer's DWARF through libdw [host][elf][libdw]: source lines of
// a fixture built with -g (tests/dwarf/), found in the file itself, in a
// debug file named by .gnu_debuglink and in one found by build-id under a
// temporary debug directory, compressed or not; and the ELF reader, the
// fallback of builds without libdw, naming the same functions without
// lines. The fixture's addresses, build-id and section flags are read here
// with <elf.h>, not with the code under test.
#include "dwarf_fixture.hpp"
#include "spe_encoder.hpp"
#include "tempdir.hpp"

#include <amupmu/elf.hpp>
#include <amupmu/error.hpp>
#include <amupmu/report/record.hpp>
#include <amupmu/report/spe_report.hpp>

#include <catch2/catch.hpp>

#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include <elf.h>

using namespace amupmu;
using namespace amupmu::report;
namespace fs = std::filesystem;

// the libdw tests' helpers are unused in builds without it
namespace {

const std::string_view fixture(const std::string& name)
{
	const auto& files = test::dwarf_fixture_files();
	const auto it = files.find(name);
	REQUIRE(it != files.end());
	return it->second;
}

template <typename T>
T read_at(std::string_view image, std::uint64_t off)
{
	T out{};
	REQUIRE(off <= image.size());
	REQUIRE(sizeof(T) <= image.size() - off);
	std::memcpy(&out, image.data() + off, sizeof(T));
	return out;
}

std::vector<Elf64_Shdr> sections(std::string_view image)
{
	const auto eh = read_at<Elf64_Ehdr>(image, 0);
	REQUIRE(std::memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0);
	REQUIRE(eh.e_ident[EI_CLASS] == ELFCLASS64);
	std::vector<Elf64_Shdr> out;
	for (unsigned i = 0; i < eh.e_shnum; ++i)
		out.push_back(read_at<Elf64_Shdr>(image, eh.e_shoff + std::uint64_t{i} * eh.e_shentsize));
	return out;
}

std::string section_name(std::string_view image, const std::vector<Elf64_Shdr>& sh, const Elf64_Shdr& s)
{
	const auto eh = read_at<Elf64_Ehdr>(image, 0);
	const char* p = image.data() + sh.at(eh.e_shstrndx).sh_offset + s.sh_name;
	return {p, strnlen(p, image.size() - static_cast<std::size_t>(p - image.data()))};
}

/// The file offset of a function's first instruction (.symtab and the
/// PT_LOAD headers).
std::uint64_t function_offset(std::string_view image, std::string_view name)
{
	const auto sh = sections(image);
	for (const Elf64_Shdr& s : sh) {
		if (s.sh_type != SHT_SYMTAB)
			continue;
		const Elf64_Shdr& strtab = sh.at(s.sh_link);
		for (std::uint64_t off = 0; off + sizeof(Elf64_Sym) <= s.sh_size; off += sizeof(Elf64_Sym)) {
			const auto sym = read_at<Elf64_Sym>(image, s.sh_offset + off);
			if (std::string_view{image.data() + strtab.sh_offset + sym.st_name} != name)
				continue;
			const auto eh = read_at<Elf64_Ehdr>(image, 0);
			for (unsigned i = 0; i < eh.e_phnum; ++i) {
				const auto ph = read_at<Elf64_Phdr>(image, eh.e_phoff + std::uint64_t{i} * eh.e_phentsize);
				if (ph.p_type == PT_LOAD && sym.st_value >= ph.p_vaddr &&
				    sym.st_value < ph.p_vaddr + ph.p_filesz)
					return sym.st_value - ph.p_vaddr + ph.p_offset;
			}
		}
	}
	FAIL("no function " << name << " in the fixture");
	return 0;
}

/// The NT_GNU_BUILD_ID note's bytes in hex.
[[maybe_unused]] std::string build_id(std::string_view image)
{
	for (const Elf64_Shdr& s : sections(image)) {
		if (s.sh_type != SHT_NOTE)
			continue;
		for (std::uint64_t off = s.sh_offset; off + sizeof(Elf64_Nhdr) <= s.sh_offset + s.sh_size;) {
			const auto n = read_at<Elf64_Nhdr>(image, off);
			const std::uint64_t name = off + sizeof(Elf64_Nhdr);
			const std::uint64_t desc = name + ((n.n_namesz + 3) & ~3u);
			if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 &&
			    std::memcmp(image.data() + name, "GNU", 4) == 0) {
				std::string hex;
				for (std::uint64_t i = 0; i < n.n_descsz; ++i) {
					static const char digits[] = "0123456789abcdef";
					const auto b = static_cast<unsigned char>(image.at(desc + i));
					hex += digits[b >> 4];
					hex += digits[b & 15];
				}
				return hex;
			}
			off = desc + ((n.n_descsz + 3) & ~3u);
		}
	}
	FAIL("the fixture has no build-id");
	return {};
}

/// Whether the image's .debug_info is SHF_COMPRESSED (and there at all).
[[maybe_unused]] bool debug_info_compressed(std::string_view image)
{
	const auto sh = sections(image);
	for (const Elf64_Shdr& s : sh)
		if (section_name(image, sh, s) == ".debug_info")
			return (s.sh_flags & SHF_COMPRESSED) != 0;
	FAIL("the file has no .debug_info");
	return false;
}

/// The line of fixture source file marked "// line: <function>".
std::uint32_t marked_line(const std::string& source, std::string_view function)
{
	const std::string_view text = fixture(source);
	const std::string mark = "// line: " + std::string{function};
	const std::size_t at = text.find(mark);
	REQUIRE(at != std::string_view::npos);
	return static_cast<std::uint32_t>(1 + std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
}

constexpr std::uint32_t fixture_pid = 4242;
constexpr std::uint64_t fixture_base = 0x7f0000000000;

/// The fixture files named in a temporary directory, as written.
struct Place {
	test::TempDir dir{"amupmu-dwarf"};

	fs::path put(const std::string& name, const fs::path& as)
	{
		fs::path p = dir.path() / as;
		test::put(p, fixture(name));
		return p;
	}
};

/// What a Symbolizer says of the first instruction of each fixture function
/// in the file at path, mapped whole at fixture_base.
struct Answer {
	Resolved hot, util;
};

Answer resolve(Symbolizer& sym, const fs::path& path)
{
	const std::string_view image = fixture("libfixture.so");
	sym.add({fixture_pid, fixture_base, fixture_base + 0x100000, 0, path.string()});
	return {sym.resolve(fixture_pid, fixture_base + function_offset(image, "amupmu_dw_hot"), SampleMode::user),
		sym.resolve(fixture_pid, fixture_base + function_offset(image, "amupmu_dw_util"), SampleMode::user)};
}

void check_names(const Answer& a, const fs::path& path)
{
	CHECK(a.hot.symbol == "amupmu_dw_hot+0x0");
	CHECK(a.util.symbol == "amupmu_dw_util+0x0");
	CHECK(a.hot.dso == path.string());
}

[[maybe_unused]] void check_lines(const Answer& a)
{
	CHECK(a.hot.line == marked_line("fixture_main.c", "amupmu_dw_hot"));
	CHECK(a.util.line == marked_line("fixture_util.c", "amupmu_dw_util"));
	CHECK(a.hot.file.ends_with("/tests/dwarf/fixture_main.c"));
	CHECK(srcline(a.hot) == "fixture_main.c:" + std::to_string(marked_line("fixture_main.c", "amupmu_dw_hot")));
	CHECK(srcline(a.util) == "fixture_util.c:" + std::to_string(marked_line("fixture_util.c", "amupmu_dw_util")));
}

void check_no_lines(const Answer& a)
{
	CHECK(a.hot.file.empty());
	CHECK(a.hot.line == 0);
	CHECK(a.util.line == 0);
	CHECK(srcline(a.hot).empty());
}

} // namespace

TEST_CASE("srcline() and the symbolizer's options (host)", "[host][elf]")
{
	CHECK(srcline({"f+0x0", "/lib/x.so", "/src/a/b.c", 12}) == "b.c:12");
	CHECK(srcline({"f+0x0", "/lib/x.so", "b.c", 3}) == "b.c:3");
	CHECK(srcline({"f+0x0", "/lib/x.so", "/src/b.c", 0}).empty());
	CHECK(srcline({"f+0x0", "/lib/x.so", "", 7}).empty());
	CHECK_THROWS_AS(Symbolizer({.dwarf = true, .debug_dir = "relative/dir"}), InvalidArgument);
	CHECK_THROWS_WITH(Symbolizer({.dwarf = true, .debug_dir = "/a:/b"}), Catch::Matchers::Contains("'/a:/b'"));
	CHECK_NOTHROW(Symbolizer({.dwarf = true, .debug_dir = ""}));
	CHECK_FALSE(Symbolizer({.dwarf = false}).uses_dwarf());
	CHECK(Symbolizer{}.uses_dwarf() == Symbolizer::dwarf_available());
}

TEST_CASE("the ELF reader names the fixture's functions without lines (host)", "[host][elf][libdw]")
{
	WARN("host test: the ELF symbol table reader (the fallback without libdw); this build "
	     << (Symbolizer::dwarf_available() ? "has" : "has no") << " libdw");
	Place place;
	const fs::path so = place.put("libfixture.so", "libfixture.so");
	Symbolizer sym{{.dwarf = false, .debug_dir = ""}};
	const Answer a = resolve(sym, so);
	check_names(a, so);
	check_no_lines(a);
	// stripped, the ELF reader has no name for them
	Symbolizer bare_sym{{.dwarf = false, .debug_dir = ""}};
	const fs::path bare = place.put("libfixture-link.so", "libfixture-link.so");
	place.put("fixture.debug", "fixture.debug");
	CHECK(resolve(bare_sym, bare).hot.symbol.empty());
}

#if AMUPMU_HAVE_LIBDW
TEST_CASE("libdw: lines of a file built with -g (host)", "[host][elf][libdw]")
{
	WARN("host test: libdw (DWARF) symbolizer");
	REQUIRE(Symbolizer::dwarf_available());
	Place place;
	const fs::path so = place.put("libfixture.so", "libfixture.so");
	Symbolizer sym{{.dwarf = true, .debug_dir = ""}};
	REQUIRE(sym.uses_dwarf());
	const Answer a = resolve(sym, so);
	check_names(a, so);
	check_lines(a);
	// past the mapped file's end: the mapping, no symbol, no line
	const Resolved past = sym.resolve(fixture_pid, fixture_base + 0xfff00, SampleMode::user);
	CHECK(past.dso == so.string());
	CHECK(past.symbol.empty());
	CHECK(past.line == 0);
	// the same names as the ELF reader's
	Symbolizer elf{{.dwarf = false, .debug_dir = ""}};
	const Answer e = resolve(elf, so);
	CHECK(e.hot.symbol == a.hot.symbol);
	CHECK(e.util.symbol == a.util.symbol);
	// not an ELF file: the mapping, nothing else
	Symbolizer text{{.dwarf = true, .debug_dir = ""}};
	const fs::path c = place.put("fixture_main.c", "not-elf.so");
	const Answer t = resolve(text, c);
	CHECK(t.hot.dso == c.string());
	CHECK(t.hot.symbol.empty());
	CHECK(t.hot.line == 0);
}

TEST_CASE("libdw: a stripped file's debug file by .gnu_debuglink (host)", "[host][elf][libdw]")
{
	WARN("host test: libdw (DWARF) symbolizer, .gnu_debuglink");
	Place place;
	const fs::path so = place.put("libfixture-link.so", "lib/libfixture-link.so");
	SECTION("next to the file")
	{
		place.put("fixture.debug", "lib/fixture.debug");
		Symbolizer sym{{.dwarf = true, .debug_dir = ""}};
		const Answer a = resolve(sym, so);
		check_names(a, so);	// from the debug file's .symtab
		check_lines(a);
	}
	SECTION("in .debug/ next to it")
	{
		place.put("fixture.debug", "lib/.debug/fixture.debug");
		Symbolizer sym{{.dwarf = true, .debug_dir = ""}};
		check_lines(resolve(sym, so));
	}
	SECTION("under the debug directory, at the file's own directory")
	{
		const fs::path root = place.dir.path() / "debug";
		place.put("fixture.debug", fs::path{"debug"} / so.relative_path().parent_path() / "fixture.debug");
		Symbolizer sym{{.dwarf = true, .debug_dir = root.string()}};
		check_lines(resolve(sym, so));
		// and not without that directory
		Symbolizer without{{.dwarf = true, .debug_dir = ""}};
		const Answer a = resolve(without, so);
		check_no_lines(a);
		CHECK(a.hot.symbol.empty());
	}
	SECTION("the debug information of another build (its build-id differs) is not taken")
	{
		REQUIRE(build_id(fixture("libfixture-gz.so")) != build_id(fixture("libfixture.so")));
		place.put("libfixture-gz.so", "lib/fixture.debug");
		Symbolizer sym{{.dwarf = true, .debug_dir = ""}};
		check_no_lines(resolve(sym, so));
	}
}

TEST_CASE("libdw: a stripped file's debug file by build-id (host)", "[host][elf][libdw]")
{
	WARN("host test: libdw (DWARF) symbolizer, build-id");
	Place place;
	const fs::path so = place.put("libfixture-bare.so", "libfixture-bare.so");
	const std::string id = build_id(fixture("libfixture-bare.so"));
	REQUIRE(id.size() >= 4);
	CHECK(id == build_id(fixture("fixture.debug")));
	const fs::path root = place.dir.path() / "debug";
	const fs::path debug = fs::path{".build-id"} / id.substr(0, 2) / (id.substr(2) + ".debug");
	SECTION("not there: no lines")
	{
		fs::create_directories(root);
		Symbolizer sym{{.dwarf = true, .debug_dir = root.string()}};
		const Answer a = resolve(sym, so);
		CHECK(a.hot.symbol.empty());
		check_no_lines(a);
	}
	SECTION("there")
	{
		place.put("fixture.debug", "debug" / debug);
		Symbolizer sym{{.dwarf = true, .debug_dir = root.string()}};
		const Answer a = resolve(sym, so);
		check_names(a, so);
		check_lines(a);
	}
	SECTION("there, with compressed sections")
	{
		REQUIRE(debug_info_compressed(fixture("fixture-z.debug")));
		place.put("fixture-z.debug", "debug" / debug);
		Symbolizer sym{{.dwarf = true, .debug_dir = root.string()}};
		const Answer a = resolve(sym, so);
		check_names(a, so);
		check_lines(a);
	}
}

TEST_CASE("libdw: lines of a file built with -gz (host)", "[host][elf][libdw]")
{
	WARN("host test: libdw (DWARF) symbolizer, compressed debug sections");
	REQUIRE(debug_info_compressed(fixture("libfixture-gz.so")));
	REQUIRE_FALSE(debug_info_compressed(fixture("libfixture.so")));
	Place place;
	const fs::path so = place.put("libfixture-gz.so", "libfixture-gz.so");
	Symbolizer sym{{.dwarf = true, .debug_dir = ""}};
	// the -gz build's code is the same as libfixture.so's (resolve()'s
	// addresses are that one's): check it
	CHECK(function_offset(fixture("libfixture-gz.so"), "amupmu_dw_hot") ==
	      function_offset(fixture("libfixture.so"), "amupmu_dw_hot"));
	const Answer a = resolve(sym, so);
	check_names(a, so);
	check_lines(a);
}

TEST_CASE("libdw: report --sort sym,srcline and the PCs' srclines (host)", "[host][elf][libdw][record]")
{
	WARN("host test: libdw (DWARF) symbolizer, format_report()");
	Place place;
	const fs::path so = place.put("libfixture.so", "libfixture.so");
	const std::string_view image = fixture("libfixture.so");
	Recording r;
	r.command = {"fixture"};
	r.event = "inst_retired:u";
	r.number = 0x08;
	r.period = 1000;
	r.cpus = "0";
	r.comms[fixture_pid] = "fixture";
	r.maps.push_back({fixture_pid, fixture_base, fixture_base + 0x100000, 0, so.string()});
	const std::uint64_t hot = fixture_base + function_offset(image, "amupmu_dw_hot");
	const std::uint64_t util = fixture_base + function_offset(image, "amupmu_dw_util");
	for (int i = 0; i < 3; ++i)
		r.samples.push_back({0, fixture_pid, fixture_pid, SampleMode::user, 100, hot, 0});
	r.samples.push_back({0, fixture_pid, fixture_pid, SampleMode::user, 200, util, 0});
	const std::string hot_line = "fixture_main.c:" + std::to_string(marked_line("fixture_main.c", "amupmu_dw_hot"));
	const std::string util_line = "fixture_util.c:" + std::to_string(marked_line("fixture_util.c", "amupmu_dw_util"));

	ReportOptions o;
	o.sort = parse_sort_keys("sym,srcline");
	CHECK(o.sort == std::vector<std::string>{"sym", "srcline"});
	const std::string text = format_report(r, o);
	INFO(text);
	CHECK_THAT(text, Catch::Matchers::Contains("#  overhead  samples  symbol  srcline\n"));
	CHECK_THAT(text, Catch::Matchers::Contains("  75.00%  3  [.] amupmu_dw_hot  " + hot_line + "\n"));
	CHECK_THAT(text, Catch::Matchers::Contains("  25.00%  1  [.] amupmu_dw_util  " + util_line + "\n"));
	CHECK_THAT(text, Catch::Matchers::Contains("#  overhead  samples  pc  symbol  dso  srcline\n"));
	CHECK_THAT(text, Catch::Matchers::Contains("[.] amupmu_dw_hot+0x0  " + so.string() + "  " + hot_line + "\n"));
	// the default columns are perf's, without the line
	CHECK_THAT(format_report(r), Catch::Matchers::Contains("#  overhead  samples  command  symbol  dso\n"));
}
TEST_CASE("libdw: spe report's hottest PCs with their srclines (host)", "[host][elf][libdw][spe]")
{
	WARN("host test: libdw (DWARF) symbolizer, build_spe_report() of encoded records");
	Place place;
	const fs::path so = place.put("libfixture.so", "libfixture.so");
	const std::string_view image = fixture("libfixture.so");
	const std::uint64_t hot = fixture_base + function_offset(image, "amupmu_dw_hot");
	SpeRecording r;
	r.command = {"fixture"};
	r.cpus = "0";
	r.backend = "mock";
	r.timer_freq = 1000000;
	r.pid = fixture_pid;
	r.cpu_stats.push_back({.cpu = 0});
	r.maps.push_back({fixture_pid, fixture_base, fixture_base + 0x100000, 0, so.string()});
	spe_enc::Buf b;
	for (unsigned i = 0; i < 4; ++i)	// user loads at the hot function's first PC
		b.op(1, 0x00).address(0, hot).counter(0, 10).context(0, fixture_pid).end();
	r.chunks.push_back({.cpu = 0, .data = b.bytes});
	const std::string hot_line = "fixture_main.c:" + std::to_string(marked_line("fixture_main.c", "amupmu_dw_hot"));

	const SpeReport rep = build_spe_report(r);
	REQUIRE(rep.pcs.size() == 1);
	CHECK(srcline(rep.pcs[0].where) == hot_line);
	const std::string text = format_spe_report_text(rep);
	INFO(text);
	CHECK_THAT(text, Catch::Matchers::Contains("amupmu_dw_hot+0x0  " + so.string() + "  " + hot_line + "\n"));
	const std::string json = format_spe_report_json(rep);
	CHECK_THAT(json, Catch::Matchers::Contains("\"line\": " + hot_line.substr(hot_line.find(':') + 1)));
}
#endif
