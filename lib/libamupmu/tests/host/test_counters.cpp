// SPDX-License-Identifier: GPL-2.0
//
// Counters and CounterResult without the driver [host]: names resolved
// against the synthetic AMUPMU_INFO of fixtures.hpp (the mock X2 board, the
// QEMU board), the CPU set, the errors of add()/start()/stop()/result() in
// the wrong order, a start() on a file that is not /dev/amupmu (typed
// error, nothing counting, the device kept for another try), and the
// result's sums, per-CPU values, order and metrics from readings laid out
// as Session::read_all() gives them. The board test of test_board_pmu.cpp
// counts with the driver.
#include "fixtures.hpp"

#include <amupmu/affinity.hpp>
#include <amupmu/counters.hpp>
#include <amupmu/error.hpp>

#include <catch2/catch.hpp>

#include <cerrno>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

using namespace amupmu;
using Catch::Matchers::Message;

namespace {

/// A device that is a file but not /dev/amupmu: every ioctl fails (ENOTTY).
Device not_amupmu()
{
	const int fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
	REQUIRE(fd >= 0);
	return Device::adopt(fd);
}

CpuReading reading(unsigned cpu, std::vector<std::uint64_t> values, std::uint64_t running)
{
	CpuReading r;
	r.cpu = cpu;
	r.nr_values = static_cast<std::uint32_t>(values.size());
	for (std::size_t i = 0; i < values.size(); ++i)
		r.values[i].value = values[i];
	r.time_running = running;
	return r;
}

std::vector<EventSpec> specs(std::initializer_list<std::string_view> names)
{
	std::vector<EventSpec> out;
	for (const std::string_view n : names)
		out.push_back(parse_event(n, 0));
	return out;
}

} // namespace

TEST_CASE("Counters: events by name, the default CPU set", "[host][counters]")
{
	STATIC_REQUIRE_FALSE(std::is_copy_constructible_v<Counters>);
	STATIC_REQUIRE(std::is_nothrow_move_constructible_v<Counters>);

	Counters c{not_amupmu(), test::mock_info()};
	// every online CPU with a PMU: 0 and 1 (2 is offline)
	CHECK(std::vector<unsigned>(c.cpus().begin(), c.cpus().end()) == std::vector<unsigned>{0, 1});
	c.add("cycles").add({"instructions", "branch-misses", "inst_retired:u"});
	c.add("IMP_STALL_BACKEND_MCQ");	// the X2's own table: names resolve with the board's MIDR
	REQUIRE(c.events().size() == 5);
	CHECK(c.events()[0].number == ev::cpu_cycles);
	CHECK(c.events()[1].number == ev::inst_retired);
	CHECK(c.events()[2].number == ev::br_mis_pred);
	CHECK(c.events()[3].flags == (evflag::excl_kernel | evflag::excl_hv));
	CHECK(c.events()[4].number == ev::imp_stall_backend_mcq);
	CHECK_FALSE(c.running());
	CHECK(c.session() == nullptr);

	Counters q{not_amupmu(), test::qemu_info()};
	CHECK(std::vector<unsigned>(q.cpus().begin(), q.cpus().end()) == std::vector<unsigned>{0});
	// not on QEMU's core
	CHECK_THROWS_AS(q.add("imp_stall_backend_mcq"), UnknownEvent);
}

TEST_CASE("Counters::add refuses bad events and adds nothing then", "[host][counters]")
{
	Counters c{not_amupmu(), test::mock_info()};
	c.add("cycles");
	CHECK_THROWS_AS(c.add("cycels"), UnknownEvent);
	CHECK_THROWS_MATCHES(c.add("cycles"), InvalidArgument,
			     Message("Counters: event 'cycles' added twice: Invalid argument (EINVAL)"));
	CHECK_THROWS_AS(c.add("CYCLES"), InvalidArgument);	// names compare without case
	CHECK_THROWS_AS(c.add("cycles:z"), InvalidArgument);
	// all or none
	CHECK_THROWS_AS(c.add({"instructions", "no_such_event"}), UnknownEvent);
	CHECK_THROWS_AS(c.add({"instructions", "instructions"}), InvalidArgument);
	CHECK(c.events().size() == 1);
	// the same event at other levels is another event
	c.add({"cycles:u", "cycles:k"});
	CHECK(c.events().size() == 3);

	Counters full{not_amupmu(), test::mock_info()};
	for (unsigned n = 0; n < max_group_events; ++n)
		full.add("r" + std::to_string(0x100 + n));
	CHECK_THROWS_MATCHES(full.add("r200"), InvalidArgument,
			     Message("Counters: more than 32 events: Invalid argument (EINVAL)"));
	CHECK(full.events().size() == max_group_events);
}

TEST_CASE("Counters::set_cpus", "[host][counters]")
{
	Counters c{not_amupmu(), test::mock_info()};
	c.set_cpus({1, 0, 1});
	CHECK(std::vector<unsigned>(c.cpus().begin(), c.cpus().end()) == std::vector<unsigned>{0, 1});
	c.set_cpus({1});
	CHECK_THROWS_AS(c.set_cpus({}), InvalidArgument);
	CHECK_THROWS_MATCHES(c.set_cpus({0, 2}), InvalidArgument,
			     Message("Counters: CPU 2 is not online with a PMU: Invalid argument (EINVAL)"));
	CHECK_THROWS_AS(c.set_cpus({99}), InvalidArgument);
	CHECK(std::vector<unsigned>(c.cpus().begin(), c.cpus().end()) == std::vector<unsigned>{1});
}

TEST_CASE("Counters: start/stop/result in the wrong order are typed errors", "[host][counters]")
{
	Counters c{not_amupmu(), test::mock_info()};
	CHECK_THROWS_MATCHES(c.start(), InvalidArgument,
			     Message("Counters: start() without an event: add() some: Invalid argument (EINVAL)"));
	CHECK_THROWS_MATCHES(c.stop(), InvalidArgument,
			     Message("Counters: stop() without start(): Invalid argument (EINVAL)"));
	CHECK_THROWS_MATCHES((void)c.result(), InvalidArgument,
			     Message("Counters: result() before stop(): Invalid argument (EINVAL)"));
	CHECK_THROWS_AS((void)c.measure(), InvalidArgument);
	bool ran = false;
	CHECK_THROWS_AS(c.measure([&] { ran = true; }), InvalidArgument);
	CHECK_FALSE(ran);	// the region is not run when counting cannot start
}

TEST_CASE("Counters::start on a file that is not amupmu: typed error, the device kept", "[host][counters]")
{
	Counters c{not_amupmu(), test::mock_info()};
	c.add({"cycles", "instructions"});
	for (int attempt = 0; attempt < 2; ++attempt) {
		CAPTURE(attempt);
		try {
			c.start();
			FAIL("started");
		} catch (const Error& e) {
			// the ioctl's ENOTTY (ENOSYS under qemu-user); the second
			// try too, not EBADF: the failed session took a duplicate,
			// not the device
			CHECK((e.errnum() == ENOTTY || e.errnum() == ENOSYS));
			CHECK_THAT(e.what(), Catch::Contains("AMUPMU_PMU_CONFIG"));
		}
		CHECK_FALSE(c.running());
		CHECK(c.session() == nullptr);
	}
	// nothing configured: events can still be added
	c.add("branch-misses");
	CHECK(c.events().size() == 3);
}

TEST_CASE("Counters: events a CPU cannot count are refused before the driver", "[host][counters]")
{
	// QEMU's PMCEID lacks BR_MIS_PRED (0x10)
	Counters c{not_amupmu(), test::qemu_info()};
	c.add({"cycles", "branch-misses"});
	CHECK_THROWS_AS(c.start(), Unsupported);
	CHECK_FALSE(c.running());
	// ":h" counts nothing on a VHE host (the mock board's kernel is at EL2)
	Counters v{not_amupmu(), test::mock_info()};
	v.add("cycles:h");
	CHECK_THROWS_AS(v.start(), InvalidArgument);
}

TEST_CASE("Counters: no CPU online with a PMU", "[host][counters]")
{
	Info info = test::qemu_info();
	info.cpus = {test::offline_cpu(0)};
	Counters c{not_amupmu(), std::move(info)};
	CHECK(c.cpus().empty());
	c.add("cycles");
	CHECK_THROWS_MATCHES(c.start(), InvalidArgument,
			     Message("Counters: no CPU online with a PMU: Invalid argument (EINVAL)"));
}

TEST_CASE("CounterResult: sums over the CPUs, per CPU, in order, metrics", "[host][counters]")
{
	const std::vector<CpuReading> cpus = {
		reading(0, {1000, 1500, 7, 20}, 900),
		reading(2, {3000, 4500, 3, 80}, 800),
		reading(5, {0, 0, 0, 0}, 1000),
	};
	const CounterResult r{specs({"cycles", "instructions", "branch-misses", "br_pred"}), cpus, 1000};
	CHECK(r["cycles"] == 4000);
	CHECK(r["instructions"] == 6000);
	CHECK(r["INSTRUCTIONS"] == 6000);
	CHECK(r["branch-misses"] == 10);
	CHECK(r.per_cpu("cycles", 0) == 1000);
	CHECK(r.per_cpu("cycles", 2) == 3000);
	CHECK(r.per_cpu("instructions", 5) == 0);
	CHECK(r.per_cpu("br_pred", 2) == 80);
	CHECK(r.find("cycles").value_or(0) == 4000);
	CHECK_FALSE(r.find("l1d_cache"));
	CHECK_THROWS_MATCHES((void)r["l1d_cache"], InvalidArgument,
			     Message("Counters: event 'l1d_cache' was not counted: Invalid argument (EINVAL)"));
	CHECK_THROWS_MATCHES((void)r.per_cpu("cycles", 1), InvalidArgument,
			     Message("Counters: CPU 1 was not counted: Invalid argument (EINVAL)"));
	CHECK(std::vector<unsigned>(r.cpus().begin(), r.cpus().end()) == std::vector<unsigned>{0, 2, 5});
	CHECK(r.time_enabled() == 1000);
	CHECK(r.time_running() == 800);

	std::vector<std::pair<std::string, std::uint64_t>> seen;
	r.for_each([&](std::string_view name, std::uint64_t total) { seen.emplace_back(name, total); });
	CHECK(seen == std::vector<std::pair<std::string, std::uint64_t>>{
			      {"cycles", 4000}, {"instructions", 6000}, {"branch-misses", 10}, {"br_pred", 100}});

	// the library's metrics of the totals: IPC 6000/4000, prediction 1 - 10/100
	const std::vector<Metric> m = r.metrics();
	REQUIRE(m.size() == 2);
	CHECK(m[0].name == "ipc");
	CHECK(m[0].value == Approx(1.5));
	CHECK(m[1].name == "branch_pred_accuracy");
	CHECK(m[1].value == Approx(90.0));

	// a default result counted nothing
	const CounterResult none;
	CHECK(none.empty());
	CHECK_THROWS_AS((void)none["cycles"], InvalidArgument);
	CHECK(none.metrics().empty());
}

TEST_CASE("CounterResult: exact 64-bit totals, no rounding through double", "[host][counters]")
{
	const std::uint64_t big = (std::uint64_t{1} << 60) + 1;	// not a double
	const std::vector<CpuReading> cpus = {reading(0, {big}, 1), reading(1, {big}, 1)};
	const CounterResult r{specs({"inst_retired"}), cpus, 1};
	CHECK(r["inst_retired"] == 2 * big);
}

TEST_CASE("CounterResult: a reading with fewer values than events is EBADMSG", "[host][counters]")
{
	const std::vector<CpuReading> cpus = {reading(0, {1, 2}, 1), reading(1, {1}, 1)};
	try {
		const CounterResult r{specs({"cycles", "instructions"}), cpus, 1};
		FAIL("accepted " << r.events().size() << " events");
	} catch (const Error& e) {
		CHECK(e.errnum() == EBADMSG);
		CHECK_THAT(e.what(), Catch::Contains("CPU 1 read 1 values for 2 events"));
	}
}

TEST_CASE("CounterResult: by position, each CPU's running time and offline state", "[host][counters]")
{
	std::vector<CpuReading> cpus = {reading(1, {10, 20}, 700), reading(3, {30, 40}, 300)};
	cpus[1].state = read_state::offline;
	const CounterResult r{specs({"cycles", "instructions"}), cpus, 1000};
	CHECK(r.total(0) == 40);
	CHECK(r.total(1) == 60);
	CHECK(r.value(0, 0) == 10);
	CHECK(r.value(1, 1) == 40);
	CHECK(r.time_running(0) == 700);
	CHECK(r.time_running(1) == 300);
	CHECK(r.time_running() == 300);
	CHECK_FALSE(r.offline(0));
	CHECK(r.offline(1));
	CHECK_THROWS_MATCHES((void)r.total(2), InvalidArgument,
			     Message("Counters: event index 2 of 2: Invalid argument (EINVAL)"));
	CHECK_THROWS_MATCHES((void)r.value(0, 2), InvalidArgument,
			     Message("Counters: CPU index 2 of 2: Invalid argument (EINVAL)"));
	CHECK_THROWS_AS((void)r.time_running(2), InvalidArgument);
	CHECK_THROWS_AS((void)r.offline(5), InvalidArgument);
}

TEST_CASE("Counters::add(EventSpec): parsed events keep name and modifiers, may repeat", "[host][counters]")
{
	Counters c{not_amupmu(), test::mock_info()};
	const std::vector<EventSpec> list = parse_event_list("{cycles,instructions}:u", c.info().cpus[0].midr);
	for (const EventSpec& e : list)
		c.add(e);
	REQUIRE(c.events().size() == 2);
	CHECK(c.events()[0].name == list[0].name);
	CHECK(c.events()[1].modifiers == "u");
	// a repeat is perf's -e a,a: a counter each; by name, the first
	c.add(list[0]);
	CHECK(c.events().size() == 3);
	CHECK_THROWS_AS(c.add(std::string_view{list[0].name}), InvalidArgument);	// by name: a mistake
	while (c.events().size() < max_group_events)
		c.add(list[1]);
	CHECK_THROWS_MATCHES(c.add(list[1]), InvalidArgument,
			     Message("Counters: more than " + std::to_string(max_group_events) +
				     " events: Invalid argument (EINVAL)"));
	CHECK(c.events().size() == max_group_events);
}

TEST_CASE("Counters::configure and read(): typed errors, nothing counting", "[host][counters]")
{
	Counters c{not_amupmu(), test::mock_info()};
	CHECK_THROWS_MATCHES((void)c.read(), InvalidArgument,
			     Message("Counters: read() while not counting: Invalid argument (EINVAL)"));
	CHECK_THROWS_AS(c.configure(), InvalidArgument);	// no event
	c.add("cycles");
	// the driver's refusal comes from configure(), before any start()
	try {
		c.configure();
		FAIL("configured");
	} catch (const Error& e) {
		CHECK((e.errnum() == ENOTTY || e.errnum() == ENOSYS));
	}
	CHECK(c.session() == nullptr);
	CHECK_FALSE(c.running());
}

namespace {

CpuTimes times_of(std::vector<std::pair<std::uint64_t, std::uint64_t>> enabled_running)
{
	CpuTimes t;
	for (std::size_t i = 0; i < enabled_running.size(); ++i)
		t.events[i] = {.enabled = enabled_running[i].first, .running = enabled_running[i].second};
	return t;
}

} // namespace

TEST_CASE("CounterResult of a multiplexed group: perf's estimates, and it says so", "[host][counters][multiplex]")
{
	// 3 events on CPUs 0 and 2: cycles ran half the time on both, instructions all the
	// time on CPU 0 and a quarter on CPU 2, br_pred never on CPU 0 and never on CPU 2
	const std::vector<CpuReading> cpus = {reading(0, {500, 2000, 0}, 1000), reading(2, {300, 100, 0}, 800)};
	const std::vector<CpuTimes> times = {times_of({{1000, 500}, {1000, 1000}, {1000, 0}}),
					     times_of({{800, 400}, {800, 200}, {800, 0}})};
	const CounterResult r{specs({"cycles", "instructions", "br_pred"}), cpus, times, 1000};
	CHECK(r.multiplexed());
	CHECK(r.scaled());

	// per CPU: each scaled by its own times
	ScaledCount c = r.count(0, 0);
	CHECK(c.value == 1000);
	CHECK(c.raw == 500);
	CHECK(c.time_enabled == 1000);
	CHECK(c.time_running == 500);
	CHECK(c.scaled);
	CHECK(c.counted);
	CHECK(c.running_fraction() == Approx(0.5));
	CHECK(r.value(0, 1) == 600);
	CHECK(r.per_cpu("cycles", 2) == 600);
	c = r.count(1, 0);	// ran all the time: exact
	CHECK(c.value == 2000);
	CHECK_FALSE(c.scaled);
	CHECK(r.value(1, 1) == 400);
	c = r.count(2, 1);
	CHECK_FALSE(c.counted);
	CHECK(c.value == 0);

	// the totals, as perf stat's aggregate: the raw sum scaled by the sums of the times
	c = r.count(0);
	CHECK(c.raw == 800);
	CHECK(c.time_enabled == 1800);
	CHECK(c.time_running == 900);
	CHECK(c.value == 1600);
	CHECK(c.scaled);
	CHECK(r.total(0) == 1600);
	CHECK(r["cycles"] == 1600);
	c = r.count("instructions");
	CHECK(c.raw == 2100);
	CHECK(c.time_running == 1200);
	CHECK(c.value == 2100 * 1800 / 1200);
	CHECK(c.running_fraction() == Approx(1200.0 / 1800));
	CHECK(r["instructions"] == 3150);
	CHECK_FALSE(r.count("br_pred").counted);
	CHECK(r.find("br_pred").value_or(99) == 0);
	CHECK_THROWS_AS((void)r.count("l1d_cache"), InvalidArgument);
	CHECK_THROWS_AS((void)r.count(3), InvalidArgument);
	CHECK_THROWS_AS((void)r.count(0, 2), InvalidArgument);

	// for_each and the metrics see the estimates: IPC 3150 / 1600
	std::vector<std::uint64_t> seen;
	r.for_each([&](std::string_view, std::uint64_t total) { seen.push_back(total); });
	CHECK(seen == std::vector<std::uint64_t>{1600, 3150, 0});
	const std::vector<Metric> m = r.metrics();
	REQUIRE_FALSE(m.empty());
	CHECK(m[0].name == "ipc");
	CHECK(m[0].value == Approx(3150.0 / 1600));
	// the group's times as before: time enabled, the smallest time running
	CHECK(r.time_enabled() == 1000);
	CHECK(r.time_running() == 800);
	CHECK(r.time_running(1) == 800);

	// every event ran all the time: multiplexed, nothing scaled
	const std::vector<CpuTimes> full = {times_of({{1000, 1000}, {1000, 1000}, {1000, 1000}}),
					    times_of({{800, 800}, {800, 800}, {800, 800}})};
	const CounterResult exact{specs({"cycles", "instructions", "br_pred"}), cpus, full, 1000};
	CHECK(exact.multiplexed());
	CHECK_FALSE(exact.scaled());
	CHECK(exact["cycles"] == 800);
	CHECK(exact.count(0).running_fraction() == 1.0);

	// the times of every CPU, or a typed error
	try {
		const CounterResult bad{specs({"cycles"}), cpus, std::span{times}.first(1), 1000};
		FAIL("accepted times of one CPU for two");
	} catch (const Error& e) {
		CHECK(e.errnum() == EBADMSG);
		CHECK_THAT(e.what(), Catch::Contains("times of 1 CPUs for readings of 2"));
	}
}

TEST_CASE("CounterResult of a pinned group: exact, never scaled, count() with the group's times", "[host][counters][multiplex]")
{
	std::vector<CpuReading> cpus = {reading(0, {10, 20}, 700), reading(1, {30, 40}, 300)};
	const CounterResult r{specs({"cycles", "instructions"}), cpus, 1000};
	CHECK_FALSE(r.multiplexed());
	CHECK_FALSE(r.scaled());
	const ScaledCount c = r.count(1);
	CHECK(c.value == 60);
	CHECK(c.raw == 60);
	CHECK(c.time_enabled == 1000);
	CHECK(c.time_running == 300);	// the smallest over the CPUs: CPU 1 was offline part of it
	CHECK_FALSE(c.scaled);
	CHECK(c.counted);
	CHECK(c.running_fraction() == Approx(0.3));
	const ScaledCount one = r.count(0, 0);
	CHECK(one.value == 10);
	CHECK(one.time_running == 700);
	CHECK_FALSE(one.scaled);
	CHECK_FALSE(CounterResult{}.multiplexed());
	CHECK_FALSE(CounterResult{}.scaled());
}

TEST_CASE("Counters::set_multiplex: shared mode only, before the first start", "[host][counters][multiplex]")
{
	Counters shared{not_amupmu(), test::shared_info()};
	CHECK_FALSE(shared.multiplex());
	shared.set_multiplex();
	CHECK(shared.multiplex());
	shared.set_multiplex(false);
	CHECK_FALSE(shared.multiplex());
	shared.set_multiplex(true).add("instructions");
	// configured with the flag: the device (not amupmu here) is asked, and its error kept
	CHECK_THROWS_AS(shared.start(), Error);
	CHECK_FALSE(shared.running());
	CHECK(shared.multiplex());

	// exclusive mode: pinned counters only, said before the driver is asked; nothing changes
	Counters excl{not_amupmu(), test::mock_info()};
	CHECK_THROWS_MATCHES(excl.set_multiplex(), Unsupported,
			     Message("AMUPMU_PMU_CONFIG_MULTIPLEX: amupmu owns the PMU (exclusive mode): its counters "
				     "are pinned, never multiplexed; shared mode (arm_pmu owns the PMU) multiplexes: "
				     "Operation not supported (EOPNOTSUPP)"));
	CHECK_FALSE(excl.multiplex());
	CHECK_NOTHROW(excl.set_multiplex(false));

	// a driver before ABI 2.3
	Info old = test::shared_info();
	old.abi_minor = 2;
	Counters o{not_amupmu(), old};
	CHECK_THROWS_MATCHES(o.set_multiplex(), Unsupported,
			     Message("AMUPMU_PMU_CONFIG_MULTIPLEX: this driver (ABI 2.2) cannot multiplex: the flag "
				     "is ABI 2.3's: Operation not supported (EOPNOTSUPP)"));
	CHECK_FALSE(o.multiplex());
}

TEST_CASE("CounterResult::compensate: compensated values beside the raw ones, total and per CPU",
	  "[host][counters][compensation]")
{
	const std::uint64_t x2 = 0x412FD481;	// Cortex-X2 r2p1: both PMU errata apply
	std::vector<EventSpec> events;
	for (const std::string_view n : {"exc_undef", "exc_taken", "exc_return", "r160", "stall_backend_mem", "cycles"})
		events.push_back(parse_event(n, x2));
	const std::vector<CpuReading> cpus = {
		reading(0, {100, 2000, 2000, 1000, 100, 9000}, 900),
		reading(3, {300, 6000, 6000, 2000, 1000, 1000}, 800),
	};
	CounterResult r{events, cpus, 1000};
	// not compensated: raw, no compensation
	CHECK(r.compensation(0) == nullptr);
	CHECK(r.compensated("exc_undef") == 400);
	CHECK_FALSE(r.companion(1));

	r.compensate(x2, {});
	// the raw counts are kept
	CHECK(r["exc_undef"] == 400);
	CHECK(r["r160"] == 3000);
	// EXC_UNDEF x 1.21 (default), cross-checked against the same total's
	// EXC_TAKEN/EXC_RETURN
	const Compensation* undef = r.compensation("exc_undef");
	REQUIRE(undef != nullptr);
	CHECK(undef->erratum == find_erratum("AMUPMU-X2-EXC_UNDEF"));
	CHECK(undef->status == CompensationStatus::compensated);
	CHECK(undef->raw == 400);
	CHECK_FALSE(undef->parameter.calibrated);
	REQUIRE(undef->cross_check);
	CHECK(undef->cross_check->consistent);
	CHECK(r.compensated("exc_undef") == Approx(400 * 1.21));
	CHECK(r.compensated(0) == Approx(400 * 1.21));
	// per CPU: each with its own companions
	CHECK(r.compensated(0, 0) == Approx(100 * 1.21));
	CHECK(r.compensated(0, 1) == Approx(300 * 1.21));
	// IMP_STALL_BACKEND_MCQ minus min(0.30 x measured, STALL_BACKEND_MEM):
	// total 3000 - min(900, 1100); CPU 0 1000 - min(300, 100); CPU 3
	// 2000 - min(600, 1000)
	CHECK(r.compensated("r160") == Approx(2100));
	CHECK(r.compensated(3, 0) == Approx(900));
	CHECK(r.compensated(3, 1) == Approx(1400));
	REQUIRE(r.compensation(3, 1) != nullptr);
	CHECK(r.compensation(3, 1)->companion == 1000);
	// events no erratum touches: the raw values
	CHECK(r.compensation("cycles") == nullptr);
	CHECK(r.compensation(1) == nullptr);
	CHECK(r.compensated("cycles") == 10000);
	CHECK(r.compensated(5, 1) == 1000);
	CHECK_THROWS_AS((void)r.compensation(6), InvalidArgument);
	CHECK_THROWS_AS((void)r.compensation(0, 2), InvalidArgument);
	CHECK_THROWS_AS((void)r.compensated("l1d_cache"), InvalidArgument);
	CHECK_THROWS_AS((void)r.companion(6), InvalidArgument);
	// the copy keeps them (a value)
	const CounterResult copy = r;
	REQUIRE(copy.compensation(0) != nullptr);
	CHECK(copy.compensated(0) == Approx(400 * 1.21));

	// a board's calibration, turned off, a later revision, another core
	const Calibration cal{.midr = x2, .values = {{.erratum = "AMUPMU-X2-EXC_UNDEF", .value = 2.0}}};
	r.compensate(x2, {.calibration = cal});
	REQUIRE(r.compensation(0) != nullptr);
	CHECK(r.compensation(0)->parameter.calibrated);
	CHECK(r.compensated(0) == Approx(800));
	r.compensate(x2, {.enabled = false});
	REQUIRE(r.compensation(0) != nullptr);
	CHECK(r.compensation(0)->status == CompensationStatus::disabled);
	CHECK(r.compensated(0) == 400);
	r.compensate(0x413FD480, {});	// r3p0: after the affected range
	REQUIRE(r.compensation(0) != nullptr);
	CHECK(r.compensation(0)->status == CompensationStatus::verify);
	CHECK(r.compensated(0) == 400);
	r.compensate(0x000f0510, {});	// QEMU's max CPU: no erratum
	CHECK(r.compensation(0) == nullptr);
	CHECK(r.compensated(0) == 400);
}

TEST_CASE("CounterResult::compensate of a multiplexed group: from perf's estimates", "[host][counters][compensation]")
{
	const std::uint64_t x2 = 0x412FD481;
	std::vector<EventSpec> events;
	for (const std::string_view n : {"r160", "stall_backend_mem"})
		events.push_back(parse_event(n, x2));
	const std::vector<CpuReading> cpus = {reading(0, {500, 50}, 1000)};
	CpuTimes t;
	t.events[0] = {.enabled = 1000, .running = 500};
	t.events[1] = {.enabled = 1000, .running = 1000};
	CounterResult r{events, cpus, std::vector<CpuTimes>{t}, 1000};
	REQUIRE(r.multiplexed());
	r.compensate(x2, {});
	// the estimate 1000, minus min(300, 50)
	CHECK(r["r160"] == 1000);
	CHECK(r.compensated("r160") == Approx(950));
	CHECK(r.compensated(0, 0) == Approx(950));
}

TEST_CASE("Counters: errata companions on request, compensation before the first start",
	  "[host][counters][compensation]")
{
	Counters c{not_amupmu(), test::mock_info()};	// mock Cortex-X2 r2p1
	CHECK(c.compensation() == nullptr);
	c.add("exc_undef:u").add("imp_stall_backend_mcq").add("cycles");
	c.add_errata_companions();
	std::vector<std::string> names;
	for (const EventSpec& e : c.events())
		names.push_back(e.name);
	CHECK(names == std::vector<std::string>{"exc_undef:u", "imp_stall_backend_mcq", "cycles", "exc_taken:u",
						"exc_return:u", "stall_backend_mem"});
	for (std::size_t i = 0; i < names.size(); ++i)
		CHECK(c.companion(i) == (i >= 3));
	CHECK_FALSE(c.companion(names.size()));
	// again: they are there already
	c.add_errata_companions();
	CHECK(c.events().size() == 6);
	// events added after them are not companions
	c.add("inst_retired");
	CHECK_FALSE(c.companion(6));

	const Calibration cal{.midr = 0x412FD481, .values = {{.erratum = "AMUPMU-X2-MCQ", .value = 0.5}}};
	c.set_compensation({.exc_undef_ec0 = 7, .calibration = cal});
	REQUIRE(c.compensation() != nullptr);
	CHECK(c.compensation()->enabled);
	CHECK(c.compensation()->exc_undef_ec0 == 7);
	REQUIRE(c.compensation()->calibration);
	CHECK(*c.compensation()->calibration == cal);

	// no room: nothing added
	Counters full{not_amupmu(), test::mock_info()};
	full.add("exc_undef");
	for (std::size_t i = 1; i < max_group_events; ++i)
		full.add(parse_event("cycles", 0));
	CHECK_THROWS_AS(full.add_errata_companions(), InvalidArgument);
	CHECK(full.events().size() == max_group_events);
	CHECK_FALSE(full.companion(0));

	// a core without such an erratum: none
	Counters qemu{not_amupmu(), test::qemu_info()};
	qemu.add("exc_undef").add("r160").add_errata_companions();
	CHECK(qemu.events().size() == 2);
}

namespace {

// An Info in which every CPU up to top is online with a PMU (the mock X2)
// and free counters: whichever CPU the test thread runs on is countable.
Info countable_up_to(unsigned top)
{
	Info info = test::mock_info();
	info.cpus.clear();
	for (unsigned c = 0; c <= top; ++c) {
		info.cpus.push_back(test::mock_x2_cpu(c));
		info.cpus.back().pmu_counters_free = 0x8000003f;
	}
	return info;
}

std::vector<unsigned> cpus_of(const Counters& c)
{
	return {c.cpus().begin(), c.cpus().end()};
}

} // namespace

TEST_CASE("Counters::measure_this_thread: typed errors, the thread's affinity and the CPU set given back",
	  "[host][counters][affinity]")
{
	const std::vector<unsigned> allowed = thread_affinity();
	REQUIRE_FALSE(allowed.empty());
	SECTION("start() refused (a file that is not amupmu): pinned to the thread's CPU, then given back")
	{
		Counters c{not_amupmu(), countable_up_to(allowed.back() + 1)};
		c.add("cycles");
		const std::vector<unsigned> set = cpus_of(c);
		REQUIRE(set.size() == allowed.back() + 2);
		try {
			const Counters::PinnedScope scope = c.measure_this_thread();
			FAIL("started");
		} catch (const Error& e) {
			CHECK((e.errnum() == ENOTTY || e.errnum() == ENOSYS));	// the session's ioctl
		}
		CHECK(thread_affinity() == allowed);
		CHECK(cpus_of(c) == set);
		CHECK_FALSE(c.running());
		bool ran = false;
		CHECK_THROWS_AS(c.measure_this_thread([&] { ran = true; }), Error);
		CHECK_FALSE(ran);	// the region is not run when counting cannot start
		CHECK(thread_affinity() == allowed);
		CHECK(cpus_of(c) == set);
	}
	SECTION("the thread's CPU has no PMU: InvalidArgument, nothing changed")
	{
		// only a CPU beyond those the thread may use has one
		Info info = countable_up_to(allowed.back() + 1);
		for (unsigned c = 0; c <= allowed.back(); ++c)
			info.cpus[c] = test::offline_cpu(c);
		Counters c{not_amupmu(), info};
		c.add("cycles");
		CHECK_THROWS_MATCHES((void)c.measure_this_thread(), InvalidArgument,
				     Catch::Predicate<InvalidArgument>([](const InvalidArgument& e) {
					     return std::string{e.what()}.find("is not online with a PMU") !=
						    std::string::npos;
				     }, "the CPU is not online with a PMU"));
		CHECK(thread_affinity() == allowed);
		CHECK(cpus_of(c) == std::vector<unsigned>{allowed.back() + 1});
	}
	SECTION("no event: InvalidArgument from start(), given back")
	{
		Counters c{not_amupmu(), countable_up_to(allowed.back())};
		const std::vector<unsigned> set = cpus_of(c);
		CHECK_THROWS_AS((void)c.measure_this_thread(), InvalidArgument);
		CHECK(thread_affinity() == allowed);
		CHECK(cpus_of(c) == set);
	}
}
