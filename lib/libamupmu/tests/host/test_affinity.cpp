// SPDX-License-Identifier: GPL-2.0
//
// The calling thread's affinity and ThreadPin [host]: on whatever CPUs the
// test may use (one is enough), nothing of amupmu's needed.
// Counters::measure_this_thread(), which pins with it: test_counters.cpp.
#include <amupmu/affinity.hpp>
#include <amupmu/error.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <thread>
#include <type_traits>
#include <vector>

using namespace amupmu;

TEST_CASE("ThreadPin: the thread on its CPU for the scope, its affinity given back", "[host][affinity]")
{
	STATIC_REQUIRE_FALSE(std::is_copy_constructible_v<ThreadPin>);
	STATIC_REQUIRE_FALSE(std::is_move_constructible_v<ThreadPin>);
	const std::vector<unsigned> before = thread_affinity();
	REQUIRE_FALSE(before.empty());
	CHECK(std::ranges::is_sorted(before));
	{
		const ThreadPin pin;
		CHECK(std::ranges::find(before, pin.cpu()) != before.end());
		CHECK(thread_affinity() == std::vector<unsigned>{pin.cpu()});
		CHECK(current_cpu() == pin.cpu());
		CHECK(pin.previous() == before);
		{
			// nested: the inner one gives back the outer one's
			const ThreadPin inner{before.back()};
			CHECK(inner.cpu() == before.back());
			CHECK(thread_affinity() == std::vector<unsigned>{before.back()});
			CHECK(current_cpu() == before.back());
		}
		CHECK(thread_affinity() == std::vector<unsigned>{pin.cpu()});
		CHECK(current_cpu() == pin.cpu());
	}
	CHECK(thread_affinity() == before);
}

TEST_CASE("ThreadPin: the affinity is the thread's, not the process's", "[host][affinity]")
{
	const std::vector<unsigned> before = thread_affinity();
	std::vector<unsigned> seen;
	std::thread t{[&] {
		const ThreadPin pin{before.front()};
		seen = thread_affinity();
	}};
	t.join();
	CHECK(seen == std::vector<unsigned>{before.front()});
	CHECK(thread_affinity() == before);
}

TEST_CASE("ThreadPin: a CPU the thread may not use is InvalidArgument, nothing changed", "[host][affinity]")
{
	const std::vector<unsigned> before = thread_affinity();
	// beyond every possible CPU
	CHECK_THROWS_MATCHES(ThreadPin{100000}, InvalidArgument,
			     Catch::Predicate<InvalidArgument>([](const InvalidArgument& e) {
				     return std::string{e.what()}.starts_with("sched_setaffinity to CPU 100000: ");
			     }, "sched_setaffinity to CPU 100000: ..."));
	CHECK(thread_affinity() == before);
	CHECK_THROWS_AS(set_thread_affinity({}), InvalidArgument);
	CHECK(thread_affinity() == before);
	// set_thread_affinity() itself: one CPU, then the set again
	set_thread_affinity({before.front()});
	CHECK(thread_affinity() == std::vector<unsigned>{before.front()});
	set_thread_affinity(before);
	CHECK(thread_affinity() == before);
}
