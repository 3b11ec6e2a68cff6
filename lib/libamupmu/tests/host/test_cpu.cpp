// SPDX-License-Identifier: GPL-2.0
#include <amupmu/affinity.hpp>

#include <catch2/catch.hpp>

using namespace amupmu;
using Cpus = std::vector<unsigned>;

TEST_CASE("parse_cpu_list reads sysfs CPU lists", "[host][cpu]")
{
	CHECK(parse_cpu_list("0-3,6\n") == Cpus{0, 1, 2, 3, 6});
	CHECK(parse_cpu_list("0") == Cpus{0});
	CHECK(parse_cpu_list("0-1") == Cpus{0, 1});
	CHECK(parse_cpu_list("4,0-1,1") == Cpus{0, 1, 4});
	CHECK(parse_cpu_list("") == Cpus{});
	CHECK(parse_cpu_list("\n") == Cpus{});
}

TEST_CASE("parse_cpu_list rejects malformed lists", "[host][cpu]")
{
	const std::string_view bad = GENERATE(as<std::string_view>{},
		"0-", "-1", "3-1", "a", "0,,1", "0,", ",0", "1 2", "0-1-2", "0x1", "0-4294967295",
		"99999999999");
	CAPTURE(bad);
	CHECK_FALSE(parse_cpu_list(bad).has_value());
}

TEST_CASE("format_cpu_list is the inverse", "[host][cpu]")
{
	CHECK(format_cpu_list(Cpus{0, 1, 2, 3, 6}) == "0-3,6");
	CHECK(format_cpu_list(Cpus{}).empty());
	CHECK(format_cpu_list(Cpus{5}) == "5");
	CHECK(format_cpu_list(Cpus{0, 2, 4, 5}) == "0,2,4-5");
	const Cpus cpus{0, 1, 7, 8, 9, 12};
	CHECK(parse_cpu_list(format_cpu_list(cpus)) == cpus);
}
