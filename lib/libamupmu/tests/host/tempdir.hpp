// SPDX-License-Identifier: GPL-2.0
//
// Host tests' files: a temporary directory removed at the end, and whole
// files written and read (fake sysfs and debugfs trees).
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

namespace amupmu::test {

inline std::string slurp(const std::filesystem::path& p)
{
	std::ifstream in{p, std::ios::binary};
	return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

inline void put(const std::filesystem::path& p, std::string_view text)
{
	std::filesystem::create_directories(p.parent_path());
	std::ofstream{p, std::ios::binary} << text;
}

/// mkdtemp("/tmp/<prefix>-XXXXXX"), removed with everything in it.
class TempDir {
public:
	explicit TempDir(const std::string& prefix)
	{
		std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
		REQUIRE(::mkdtemp(tmpl.data()));
		root_ = tmpl;
	}
	~TempDir()
	{
		std::error_code ec;
		std::filesystem::remove_all(root_, ec);
	}
	TempDir(const TempDir&) = delete;
	TempDir& operator=(const TempDir&) = delete;

	[[nodiscard]] const std::filesystem::path& path() const { return root_; }

private:
	std::filesystem::path root_;
};

} // namespace amupmu::test
