// SPDX-License-Identifier: GPL-2.0
//
// A German locale for a test's duration: decimal comma, digits grouped
// with '.'. Both the C locale (setlocale(): printf, strtod) and the C++
// global locale (every stream created afterwards) are de_DE.UTF-8, from
// the system or else compiled into the build tree by the build
// (localedef from Debian's locales package, tools/deps.sh) and read
// through LOCPATH. Without it the test fails, saying what is missing;
// AMUPMU_ALLOW_NO_LOCALE=1 (the board's initramfs has no locales) runs it
// with a C++ locale of its own (std::numpunct) and the C locale "C",
// and warns.
#pragma once

#include <catch2/catch.hpp>

#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <locale>
#include <sstream>
#include <string>

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

namespace amupmu::test {

// digits grouped with '.', decimal comma: what a German locale does
struct GermanPunct : std::numpunct<char> {
	[[nodiscard]] char do_thousands_sep() const override { return '.'; }
	[[nodiscard]] char do_decimal_point() const override { return ','; }
	[[nodiscard]] std::string do_grouping() const override { return "\3"; }
};

class GermanLocale {
public:
	GermanLocale()
	{
		static constexpr const char* name = "de_DE.UTF-8";
		const char* env = std::getenv("LOCPATH");
		bool found = std::setlocale(LC_ALL, name) != nullptr;
		std::string where = env ? std::string{"LOCPATH="} + env : std::string{"the system's"};
#ifdef AMUPMU_TEST_LOCPATH
		if (!found) {
			static const std::string locpath{AMUPMU_TEST_LOCPATH};
			::setenv("LOCPATH", locpath.c_str(), 1);
			found = std::setlocale(LC_ALL, name) != nullptr;
			where = "the build's, LOCPATH=";
			where += locpath;
		}
#endif
		if (found) {
#ifdef __SANITIZE_ADDRESS__
			// glibc's newlocale() keeps its copy of LOCPATH (argz) for
			// good: not the test's leak
			__lsan_disable();
#endif
			std::locale::global(std::locale{name});
#ifdef __SANITIZE_ADDRESS__
			__lsan_enable();
#endif
			description_ = name;
			description_ += " (C and C++), ";
			description_ += where;
		} else {
			const char* allow = std::getenv("AMUPMU_ALLOW_NO_LOCALE");
			if (!allow || std::strcmp(allow, "1") != 0)
				FAIL("locale de_DE.UTF-8 not available (neither installed nor built into the build tree: "
				     "install Debian's 'locales' package, tools/deps.sh, and rebuild; "
				     "AMUPMU_ALLOW_NO_LOCALE=1 runs the test with the C++ locale only)");
			std::locale::global(std::locale{std::locale::classic(), new GermanPunct});
			description_ = "C++ numpunct only (',' and '.'; de_DE.UTF-8 missing, "
				       "AMUPMU_ALLOW_NO_LOCALE=1: the C locale stays \"C\")";
		}
		// catch2-tap.sh passes this line on
		WARN("under the locale " << description_);
		// the locale is in effect
		std::ostringstream probe;
		probe << 1234567 << ' ' << 0.5;
		CHECK(probe.str() == "1.234.567 0,5");
		if (found) {
			char buf[16];
			std::snprintf(buf, sizeof(buf), "%.1f", 0.5);
			CHECK(std::string{buf} == "0,5");
		}
	}
	~GermanLocale()
	{
		std::locale::global(std::locale::classic());
		std::setlocale(LC_ALL, "C");
	}
	GermanLocale(const GermanLocale&) = delete;
	GermanLocale& operator=(const GermanLocale&) = delete;

	[[nodiscard]] const std::string& description() const { return description_; }

private:
	std::string description_;
};

} // namespace amupmu::test
