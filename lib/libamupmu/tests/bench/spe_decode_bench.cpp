// SPDX-License-Identifier: GPL-2.0
//
// spe_decode_bench [--json FILE] [--mib N]: host figure of the SPE record
// decoder (make bench-host). Decodes a buffer of synthetic records in the
// architected format (loads, stores, branches, other operations, padding)
// with amupmu::spe::RecordReader, reading the fields a profiler reads, and
// copies the same buffer with memcpy(); prints bytes/s and records/s of
// both and their ratio (decode / memcpy). Best of 15 runs each (the
// median's ratio too). Then the same buffer as one CPU's chunk of a
// recording through the whole report (amupmu::report::build_spe_report():
// decode and every aggregate, symbols included): records/s, best of 3 runs.
#include "spe_encoder.hpp"

#include <amupmu/spe.hpp>
#include <amupmu/report/spe_report.hpp>

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

// One pass of the reader over in, reading the fields a profiler reads;
// seconds, or -1 when the buffer did not decode cleanly.
double decode_once(std::span<const std::byte> in, std::uint64_t& records, std::uint64_t& sink)
{
	const auto t0 = clock_type::now();
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
	const auto t1 = clock_type::now();
	if (rd.stats().unknown_packets || rd.stats().truncated) {
		std::fprintf(stderr, "spe_decode_bench: the synthetic buffer did not decode cleanly\n");
		return -1;
	}
	records = n;
	return std::chrono::duration<double>(t1 - t0).count();
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
	const spe_enc::Buf buf = make_buffer(mib << 20, true);
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

		const double dt = decode_once(in, records, sink);
		if (dt < 0)
			return 1;
		decode_s.push_back(dt);
	}
	// the same mix, each record beginning with its PC (hardware's and the
	// mock model's order), against the same memcpy figure
	const spe_enc::Buf pcbuf = make_buffer(mib << 20, false);
	std::vector<double> pc_decode_s;
	std::uint64_t pc_records = 0;
	for (int run = 0; run < runs; ++run) {
		const double dt = decode_once(pcbuf.span(), pc_records, sink);
		if (dt < 0)
			return 1;
		pc_decode_s.push_back(dt);
	}
	// the whole report: decode, aggregation, symbols (none to load), sorting
	constexpr int report_runs = 3;
	amupmu::report::SpeRecording rec;
	rec.backend = "bench";
	rec.chunks.push_back({.cpu = 0, .data = buf.bytes});
	std::vector<double> report_s;
	for (int run = 0; run < report_runs; ++run) {
		const auto t0 = clock_type::now();
		const amupmu::report::SpeReport rep = amupmu::report::build_spe_report(rec);
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
	const double pc_bps = static_cast<double>(pcbuf.bytes.size()) / best(pc_decode_s);
	const double pc_ratio = pc_bps / copy_bps;

	std::printf("BENCH spe_decode.buffer_bytes %zu\n", in.size());
	std::printf("BENCH spe_decode.records %llu\n", static_cast<unsigned long long>(records));
	std::printf("BENCH spe_decode.decode_bytes_per_s %.0f\n", dec_bps);
	std::printf("BENCH spe_decode.decode_records_per_s %.0f\n", dec_rps);
	std::printf("BENCH spe_decode.memcpy_bytes_per_s %.0f\n", copy_bps);
	std::printf("BENCH spe_decode.report_records_per_s %.0f\n", report_rps);
	std::printf("BENCH spe_decode.pc_first_bytes_per_s %.0f\n", pc_bps);
	std::printf("BENCH spe_decode.pc_first_records_per_s %.0f\n",
		    static_cast<double>(pc_records) / best(pc_decode_s));
	std::printf("BENCH spe_decode.pc_first_ratio %.3f (records beginning with their PC)\n", pc_ratio);
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
			     "\"median_ratio\": %.3f, \"target_ratio\": 0.25, \"pc_first_bytes_per_s\": %.0f, "
			     "\"pc_first_ratio\": %.3f, \"report_records_per_s\": %.0f, "
			     "\"report_runs\": %d, \"runs\": %d, \"what\": \"host: best of %d runs; "
			     "amupmu::spe::RecordReader over %zu MiB of synthetic records (loads, stores, branches, "
			     "SIMD, SVE) reading PC, total latency, events, VA and op type of each, against memcpy() "
			     "of the same buffer; pc_first: the same mix with each record beginning with its PC and "
			     "an instruction's kind following from its PC; report_records_per_s: the same buffer through "
			     "amupmu::build_spe_report(), best of %d runs\"}\n",
			     in.size(), static_cast<unsigned long long>(records), dec_bps, dec_rps, copy_bps, ratio, median_ratio,
			     pc_bps, pc_ratio, report_rps, report_runs, runs, runs, mib, report_runs);
		std::fclose(f);
	}
	return 0;
}
