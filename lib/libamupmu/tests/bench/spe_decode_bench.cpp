// SPDX-License-Identifier: GPL-2.0
//
// spe_decode_bench [--json FILE] [--mib N]: host figure of the SPE record
// decoder (make bench-host). Decodes buffers of synthetic records in the
// architected format with amupmu::spe::RecordReader, reading the fields a
// profiler reads, and copies a buffer of the same size with memcpy();
// prints bytes/s and records/s of both and their ratio (decode / memcpy),
// per layout of the records:
//  - packed: packets back to back, PAD only between records (the mock
//    model's records), each beginning with its Operation Type
//    ("ratio", the figure of earlier versions), and pc_first, each
//    beginning with its PC;
//  - slot64: Neoverse N1-class fixed 64-byte slots, PAD inside each record
//    where it lacks a packet (spe_enc::Buf::slot64());
//  - variable: HiSilicon-class and KVM-guest records of 32-44 bytes,
//    latencies and EVENTS before the operation type, PAD before the
//    TIMESTAMP (spe_enc::Buf::variable()).
// Times are the thread's CPU time (CLOCK_THREAD_CPUTIME_ID: a run
// preempted on a loaded host does not count the other work); best of 15
// runs each, the layouts and memcpy in turn (the median's ratio too).
// min_ratio is the slowest layout's. Then the packed buffer as one CPU's
// chunk of a recording through the whole report
// (amupmu::report::build_spe_report(): decode and every aggregate, symbols
// included): records/s, best of 3 runs.
#include "spe_encoder.hpp"

#include <amupmu/spe.hpp>
#include <amupmu/report/spe_report.hpp>

#include <time.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

// The calling thread's CPU time, in seconds.
double thread_seconds()
{
	timespec ts{};
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

double best(const std::vector<double>& v)
{
	return *std::min_element(v.begin(), v.end());
}

// Records as the synthetic mix below. op_first: each record begins with
// its Operation Type packet and the kind is drawn per record. Otherwise
// (pc_first) each begins with its PC, as Neoverse N1's records and the mock
// model's do, and an instruction's kind follows from its PC (a load
// instruction is always a load): the layout cache's set then comes from
// the PC's low byte.
spe_enc::Buf make_buffer(std::size_t bytes, bool op_first)
{
	spe_enc::Buf b;
	b.bytes.reserve(bytes + 256);
	std::mt19937_64 rng{12345};
	std::uint64_t ts = 1'000'000;
	// the record's first two packets: its operation and its PC
	const auto head = [&](unsigned cls, std::uint8_t payload, std::uint64_t pc) -> spe_enc::Buf& {
		return op_first ? b.op(cls, payload).address(0, pc) : b.address(0, pc).op(cls, payload);
	};
	while (b.bytes.size() < bytes) {
		const std::uint64_t pc = 0x400000 + (rng() % 65536) * 4;
		const std::uint64_t kind = op_first ? rng() % 8 : (pc * 0x9E3779B97F4A7C15ULL) >> 61;
		switch (kind) {
		case 0:
		case 1:
		case 2: {	// load with addresses, latencies, events, data source
			const std::uint64_t va = 0xffff00000000ULL + (rng() % (1u << 24)) * 8;
			head(1, 0x00, pc | 0xA000000000000000ULL)	// NS, EL1
				.address(2, va)
				.address(3, (va & 0xFFFFFFFFFFULL) | 0x8000000000000000ULL)
				.counter(2, 3).counter(0, 27).counter(1, 4).events(0x0016, 2).data_source(0, 2)
				.context(0, 1234).timestamp(ts += 100);
			break;
		}
		case 3:	// store
			head(1, 0x01, pc).address(2, 0x7fff0000 + rng() % 4096).counter(0, 12).counter(1, 2)
				.events(0x02, 1).context(0, 42).timestamp(ts += 100);
			break;
		case 4:
		case 5:	// branch
			head(2, 0x01, pc).address(1, pc + 64 * (rng() % 16)).counter(0, 9).counter(1, 1)
				.events(0x0042, 1).end();
			break;
		case 6:	// other (SIMD), with padding after it
			head(0, 0x04, pc).counter(0, 5).counter(1, 1).events(0x02, 1).timestamp(ts += 100);
			b.pad(rng() % 4);
			break;
		default:	// SVE gather load with its vector length
			head(1, 0xac, pc).address(2, 0x10000 + rng() % 4096).counter(0, 40).counter(1, 7)
				.counter(2, 3).events(0x0000001e, 2).timestamp(ts += 100);
			break;
		}
	}
	return b;
}

// Records of the hardware layouts (spe_enc::Buf::slot64() or variable()):
// an instruction's kind follows from its PC, as in the pc_first buffer.
spe_enc::Buf make_hw_buffer(std::size_t bytes, bool slot64)
{
	spe_enc::Buf b;
	b.bytes.reserve(bytes + 256);
	std::mt19937_64 rng{54321};
	std::uint64_t ts = 1'000'000;
	while (b.bytes.size() < bytes) {
		const std::uint64_t pc = 0x400000 + (rng() % 65536) * 4;
		const auto kind = static_cast<unsigned>(((pc * 0x9E3779B97F4A7C15ULL) >> 58) % spe_enc::Fields::kinds);
		spe_enc::Fields f = spe_enc::Fields::typical(kind, pc, rng, ts += 100);
		if (slot64) {
			b.slot64(f);
		} else {
			f.context.reset();
			b.variable(f);
		}
	}
	return b;
}

// One pass of the reader over in, reading the fields a profiler reads;
// seconds, or -1 when the buffer did not decode cleanly.
double decode_once(std::span<const std::byte> in, std::uint64_t& records, std::uint64_t& sink)
{
	const double t0 = thread_seconds();
	amupmu::spe::RecordReader rd{in};
	amupmu::spe::Record r;
	std::uint64_t n = 0;
	std::uint64_t acc = 0;	// a local: kept in a register across next()
	while (rd.next(r)) {
		++n;
		if (auto pc = r.pc())
			acc += pc->address;
		if (auto lat = r.total_latency())
			acc += *lat;
		if (auto ev = r.events())
			acc += ev->l1d_refill();
		if (auto va = r.data_va())
			acc ^= va->address;
		if (auto op = r.op())
			acc += op->is_load();
	}
	sink += acc;
	const double t1 = thread_seconds();
	if (rd.stats().unknown_packets || rd.stats().truncated) {
		std::fprintf(stderr, "spe_decode_bench: the synthetic buffer did not decode cleanly\n");
		return -1;
	}
	records = n;
	return t1 - t0;
}

struct LayoutRun {
	const char* name;
	const char* what;
	spe_enc::Buf buf;
	std::vector<double> seconds{};
	std::uint64_t records = 0;
	double bytes_per_s = 0, records_per_s = 0, ratio = 0, median_ratio = 0;
};

} // namespace

int main(int argc, char** argv)
{
	const char* json = nullptr;
	std::size_t mib = 32;
	for (int i = 1; i < argc; ++i) {
		if (!std::strcmp(argv[i], "--json") && i + 1 < argc)
			json = argv[++i];
		else if (!std::strcmp(argv[i], "--mib") && i + 1 < argc)
			mib = std::strtoul(argv[++i], nullptr, 0);
		else {
			std::fprintf(stderr, "usage: %s [--json FILE] [--mib N]\n", argv[0]);
			return 2;
		}
	}
	std::array<LayoutRun, 4> layouts{{
		{"packed", "packets back to back, PAD between records, each beginning with its operation type",
		 make_buffer(mib << 20, true)},
		{"pc_first", "packed, each record beginning with its PC", make_buffer(mib << 20, false)},
		{"slot64", "Neoverse N1-class fixed 64-byte slots with PAD inside", make_hw_buffer(mib << 20, true)},
		{"variable", "HiSilicon/KVM-guest 32-44 byte records, PAD before the TIMESTAMP",
		 make_hw_buffer(mib << 20, false)},
	}};
	const std::span<const std::byte> in = layouts[0].buf.span();
	std::vector<std::byte> out(in.size());
	std::memset(out.data(), 1, out.size());	// fault the pages in

	constexpr int runs = 15;
	std::vector<double> copy_s;
	std::uint64_t sink = 0;
	for (int run = 0; run < runs; ++run) {
		const double t0 = thread_seconds();
		std::memcpy(out.data(), in.data(), in.size());
		const double t1 = thread_seconds();
		copy_s.push_back(t1 - t0);
		sink += static_cast<std::uint64_t>(out[static_cast<std::size_t>(run) * 4096 % out.size()]);
		for (LayoutRun& l : layouts) {
			const double dt = decode_once(l.buf.span(), l.records, sink);
			if (dt < 0)
				return 1;
			l.seconds.push_back(dt);
		}
	}
	// the whole report: decode, aggregation, symbols (none to load), sorting
	constexpr int report_runs = 3;
	amupmu::report::SpeRecording rec;
	rec.backend = "bench";
	rec.chunks.push_back({.cpu = 0, .data = layouts[0].buf.bytes});
	std::vector<double> report_s;
	for (int run = 0; run < report_runs; ++run) {
		const double t0 = thread_seconds();
		const amupmu::report::SpeReport rep = amupmu::report::build_spe_report(rec);
		const double t1 = thread_seconds();
		report_s.push_back(t1 - t0);
		if (rep.totals.records != layouts[0].records) {
			std::fprintf(stderr, "spe_decode_bench: the report counted %llu records, the reader %llu\n",
				     static_cast<unsigned long long>(rep.totals.records),
				     static_cast<unsigned long long>(layouts[0].records));
			return 1;
		}
		sink += rep.distinct_pcs;
	}
	const double report_rps = static_cast<double>(layouts[0].records) / best(report_s);

	// Best of the runs: on a shared host other work only adds time.
	const double copy_bps = static_cast<double>(in.size()) / best(copy_s);
	const double copy_median_bps = static_cast<double>(in.size()) / median(copy_s);
	double min_ratio = 1e9;
	const char* slowest = "";
	for (LayoutRun& l : layouts) {
		const auto bytes = static_cast<double>(l.buf.bytes.size());
		l.bytes_per_s = bytes / best(l.seconds);
		l.records_per_s = static_cast<double>(l.records) / best(l.seconds);
		l.ratio = l.bytes_per_s / copy_bps;
		l.median_ratio = bytes / median(l.seconds) / copy_median_bps;
		if (l.ratio < min_ratio) {
			min_ratio = l.ratio;
			slowest = l.name;
		}
	}

	const LayoutRun& packed = layouts[0];
	std::printf("BENCH spe_decode.buffer_bytes %zu\n", in.size());
	std::printf("BENCH spe_decode.records %llu\n", static_cast<unsigned long long>(packed.records));
	std::printf("BENCH spe_decode.decode_bytes_per_s %.0f\n", packed.bytes_per_s);
	std::printf("BENCH spe_decode.decode_records_per_s %.0f\n", packed.records_per_s);
	std::printf("BENCH spe_decode.memcpy_bytes_per_s %.0f\n", copy_bps);
	std::printf("BENCH spe_decode.report_records_per_s %.0f\n", report_rps);
	for (const LayoutRun& l : layouts)
		std::printf("BENCH spe_decode.%s_ratio %.3f (%.2f GB/s, %.1f M records/s, %.1f bytes a record; "
			    "median runs %.3f)\n",
			    l.name, l.ratio, l.bytes_per_s * 1e-9, l.records_per_s * 1e-6,
			    static_cast<double>(l.buf.bytes.size()) / static_cast<double>(l.records), l.median_ratio);
	std::printf("BENCH spe_decode.ratio %.3f (packed; median runs %.3f) (sink %llu)\n", packed.ratio,
		    packed.median_ratio, static_cast<unsigned long long>(sink & 0xF));
	std::printf("BENCH spe_decode.min_ratio %.3f (%s; target >= 0.25)\n", min_ratio, slowest);
	if (json) {
		FILE* f = std::fopen(json, "w");
		if (!f) {
			std::perror(json);
			return 1;
		}
		std::fprintf(f,
			     "{\"buffer_bytes\": %zu, \"records\": %llu, \"decode_bytes_per_s\": %.0f, "
			     "\"decode_records_per_s\": %.0f, \"memcpy_bytes_per_s\": %.0f, \"ratio\": %.3f, "
			     "\"median_ratio\": %.3f, \"target_ratio\": 0.25, \"pc_first_bytes_per_s\": %.0f, "
			     "\"pc_first_ratio\": %.3f, ",
			     in.size(), static_cast<unsigned long long>(packed.records), packed.bytes_per_s,
			     packed.records_per_s, copy_bps, packed.ratio, packed.median_ratio, layouts[1].bytes_per_s,
			     layouts[1].ratio);
		std::fprintf(f, "\"layouts\": {");
		for (std::size_t i = 0; i < layouts.size(); ++i) {
			const LayoutRun& l = layouts[i];
			std::fprintf(f,
				     "%s\"%s\": {\"ratio\": %.3f, \"median_ratio\": %.3f, \"bytes_per_s\": %.0f, "
				     "\"records_per_s\": %.0f, \"buffer_bytes\": %zu, \"records\": %llu, \"what\": \"%s\"}",
				     i ? ", " : "", l.name, l.ratio, l.median_ratio, l.bytes_per_s, l.records_per_s,
				     l.buf.bytes.size(), static_cast<unsigned long long>(l.records), l.what);
		}
		std::fprintf(f, "}, ");
		for (const LayoutRun& l : layouts)
			std::fprintf(f, "\"%s_ratio\": %.3f, ", l.name, l.ratio);
		std::fprintf(f,
			     "\"min_ratio\": %.3f, \"min_layout\": \"%s\", \"report_records_per_s\": %.0f, "
			     "\"report_runs\": %d, \"runs\": %d, \"clock\": \"CLOCK_THREAD_CPUTIME_ID\", "
			     "\"what\": \"host: best of %d runs of the thread's CPU time; amupmu::spe::RecordReader "
			     "over %zu MiB of synthetic records per layout (loads, stores, branches, other operations) "
			     "reading PC, total latency, events, VA and op type of each, against memcpy() of %zu MiB; "
			     "ratio: the packed layout's; min_ratio: the slowest layout's; report_records_per_s: the "
			     "packed buffer through amupmu::build_spe_report(), best of %d runs\"}\n",
			     min_ratio, slowest, report_rps, report_runs, runs, runs, mib, mib, report_runs);
		std::fclose(f);
	}
	return 0;
}
