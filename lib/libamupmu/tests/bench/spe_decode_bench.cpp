// SPDX-License-Identifier: GPL-2.0
//
// spe_decode_bench [--json FILE] [--mib N]: host figure of the SPE record
// decoder (make bench-host). Decodes a buffer of synthetic records in the
// architected format (loads, stores, branches, other operations, padding)
// with amupmu::spe::RecordReader, reading the fields a profiler reads, and
// copies the same buffer with memcpy(); prints bytes/s and records/s of
// both and their ratio (decode / memcpy). Best of 15 runs each (the
// median's ratio too). Then the same buffer as one CPU's chunk of a
// recording through the whole report (amupmu::build_spe_report(): decode
// and every aggregate, symbols included): records/s, best of 3 runs.
#include "spe_encoder.hpp"

#include <amupmu/spe.hpp>
#include <amupmu/spe_report.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

double best(const std::vector<double>& v)
{
	return *std::min_element(v.begin(), v.end());
}

spe_enc::Buf make_buffer(std::size_t bytes)
{
	spe_enc::Buf b;
	b.bytes.reserve(bytes + 256);
	std::mt19937_64 rng{12345};
	std::uint64_t ts = 1'000'000;
	while (b.bytes.size() < bytes) {
		const std::uint64_t pc = 0x400000 + (rng() % 65536) * 4;
		switch (rng() % 8) {
		case 0:
		case 1:
		case 2:	// load with addresses, latencies, events, data source
			b.load_record(pc, 0xffff00000000ULL + (rng() % (1u << 24)) * 8, ts += 100);
			break;
		case 3:	// store
			b.op(1, 0x01).address(0, pc).address(2, 0x7fff0000 + rng() % 4096).counter(0, 12).counter(1, 2)
				.events(0x02, 1).context(0, 42).timestamp(ts += 100);
			break;
		case 4:
		case 5:	// branch
			b.branch_record(pc, pc + 64 * (rng() % 16));
			break;
		case 6:	// other (SIMD), with padding after it
			b.op(0, 0x04).address(0, pc).counter(0, 5).counter(1, 1).events(0x02, 1).timestamp(ts += 100);
			b.pad(rng() % 4);
			break;
		default:	// SVE gather load with its vector length
			b.op(1, 0xac).address(0, pc).address(2, 0x10000 + rng() % 4096).counter(0, 40).counter(1, 7)
				.counter(2, 3).events(0x0000001e, 2).timestamp(ts += 100);
			break;
		}
	}
	return b;
}

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
	const spe_enc::Buf buf = make_buffer(mib << 20);
	const std::span<const std::byte> in = buf.span();
	std::vector<std::byte> out(in.size());
	std::memset(out.data(), 1, out.size());	// fault the pages in

	constexpr int runs = 15;
	std::vector<double> copy_s, decode_s;
	std::uint64_t records = 0, sink = 0;
	for (int run = 0; run < runs; ++run) {
		auto t0 = clock_type::now();
		std::memcpy(out.data(), in.data(), in.size());
		auto t1 = clock_type::now();
		copy_s.push_back(std::chrono::duration<double>(t1 - t0).count());
		sink += static_cast<std::uint64_t>(out[static_cast<std::size_t>(run) * 4096 % out.size()]);

		t0 = clock_type::now();
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
		t1 = clock_type::now();
		decode_s.push_back(std::chrono::duration<double>(t1 - t0).count());
		if (rd.stats().unknown_packets || rd.stats().truncated) {
			std::fprintf(stderr, "spe_decode_bench: the synthetic buffer did not decode cleanly\n");
			return 1;
		}
		records = n;
	}
	// the whole report: decode, aggregation, symbols (none to load), sorting
	constexpr int report_runs = 3;
	amupmu::SpeRecording rec;
	rec.backend = "bench";
	rec.chunks.push_back({.cpu = 0, .data = buf.bytes});
	std::vector<double> report_s;
	for (int run = 0; run < report_runs; ++run) {
		const auto t0 = clock_type::now();
		const amupmu::SpeReport rep = amupmu::build_spe_report(rec);
		const auto t1 = clock_type::now();
		report_s.push_back(std::chrono::duration<double>(t1 - t0).count());
		if (rep.totals.records != records) {
			std::fprintf(stderr, "spe_decode_bench: the report counted %llu records, the reader %llu\n",
				     static_cast<unsigned long long>(rep.totals.records),
				     static_cast<unsigned long long>(records));
			return 1;
		}
		sink += rep.distinct_pcs;
	}
	const double report_rps = static_cast<double>(records) / best(report_s);

	const double bytes = static_cast<double>(in.size());
	// Best of the runs: on a shared host other work only adds time.
	const double copy_bps = bytes / best(copy_s);
	const double dec_bps = bytes / best(decode_s);
	const double dec_rps = static_cast<double>(records) / best(decode_s);
	const double ratio = dec_bps / copy_bps;
	const double median_ratio = median(copy_s) / median(decode_s);

	std::printf("BENCH spe_decode.buffer_bytes %zu\n", in.size());
	std::printf("BENCH spe_decode.records %llu\n", static_cast<unsigned long long>(records));
	std::printf("BENCH spe_decode.decode_bytes_per_s %.0f\n", dec_bps);
	std::printf("BENCH spe_decode.decode_records_per_s %.0f\n", dec_rps);
	std::printf("BENCH spe_decode.memcpy_bytes_per_s %.0f\n", copy_bps);
	std::printf("BENCH spe_decode.report_records_per_s %.0f\n", report_rps);
	std::printf("BENCH spe_decode.ratio %.3f (target >= 0.25; median runs %.3f) (sink %llu)\n", ratio,
		    median_ratio, static_cast<unsigned long long>(sink & 0xF));
	if (json) {
		FILE* f = std::fopen(json, "w");
		if (!f) {
			std::perror(json);
			return 1;
		}
		std::fprintf(f,
			     "{\"buffer_bytes\": %zu, \"records\": %llu, \"decode_bytes_per_s\": %.0f, "
			     "\"decode_records_per_s\": %.0f, \"memcpy_bytes_per_s\": %.0f, \"ratio\": %.3f, "
			     "\"median_ratio\": %.3f, \"target_ratio\": 0.25, \"report_records_per_s\": %.0f, "
			     "\"report_runs\": %d, \"runs\": %d, \"what\": \"host: best of %d runs; "
			     "amupmu::spe::RecordReader over %zu MiB of synthetic records (loads, stores, branches, "
			     "SIMD, SVE) reading PC, total latency, events, VA and op type of each, against memcpy() "
			     "of the same buffer; report_records_per_s: the same buffer through "
			     "amupmu::build_spe_report(), best of %d runs\"}\n",
			     in.size(), static_cast<unsigned long long>(records), dec_bps, dec_rps, copy_bps, ratio, median_ratio,
			     report_rps, report_runs, runs, runs, mib, report_runs);
		std::fclose(f);
	}
	return 0;
}
