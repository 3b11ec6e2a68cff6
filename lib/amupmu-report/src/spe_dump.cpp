// SPDX-License-Identifier: LGPL-2.1-or-later
//
// An SPE recording as text: `amupmu spe record`'s summary and `amupmu spe
// dump`'s packets. See spe_recording.hpp.
#include <amupmu/bits.hpp>
#include <amupmu/report/spe_recording.hpp>
#include <amupmu/spe.hpp>

#include <amupmu/text/columns.hpp>

#include <span>
#include <string>

namespace amupmu::report {

using text::pad_left;
using text::pad_right;

namespace {

// The recording's backend ("mock": INFO's AMUPMU_FEAT_MOCK) for people.
std::string backend_label(std::string_view backend)
{
	return backend == "mock" ? "mock model (test build)" : std::string{backend};
}

struct DumpCounts {
	std::uint64_t bytes = 0, records = 0, packets = 0, padding = 0, unknown = 0, truncated = 0;
};

// Records are counted as spe::RecordReader (and so `amupmu spe report`)
// counts them: one at each End or Timestamp packet, and one for the
// packets after the last of those when the chunk ends first (a packet cut
// by the chunk's end included); PAD bytes alone after it are no record.
void dump_chunk(std::string& out, std::span<const std::byte> buf, DumpCounts& n)
{
	std::size_t off = 0;
	bool open = false;	// a packet since the last End or Timestamp
	while (off < buf.size()) {
		const spe::Packet p = spe::decode_packet(buf, off);
		if (p.kind == spe::PacketKind::pad) {
			std::size_t end = off;
			while (end < buf.size() && buf[end] == std::byte{0})
				++end;
			n.padding += end - off;
			if (end - off > 1) {
				// as format_packet() lays a packet out: 10 bytes' room
				const std::string bytes = " 00 x" + std::to_string(end - off);
				out += hex(off, 8).substr(2) + ": " + pad_right(bytes, 30) + "  PAD\n";
				off = end;
				continue;
			}
		} else if (p.kind == spe::PacketKind::alignment) {
			n.padding += p.size();
			open = true;
		} else {
			++n.packets;
			open = true;
		}
		out += spe::format_packet(buf, p) + "\n";
		if (p.kind == spe::PacketKind::unknown)
			++n.unknown;
		if (p.kind == spe::PacketKind::truncated) {
			++n.truncated;
			break;
		}
		if (p.kind == spe::PacketKind::end || p.kind == spe::PacketKind::timestamp) {
			++n.records;
			open = false;
			out += "\n";
		}
		off += p.size() != 0 ? p.size() : 1;	// every packet moves on
	}
	if (open)	// ended by the chunk's end
		++n.records;
}

} // namespace

std::string format_spe_record_summary(const SpeRecording& rec, std::span<const std::uint64_t> drained,
				      std::string_view output)
{
	std::string s = "amupmu spe record: SPE backend: " + backend_label(rec.backend) + "\n";
	s += "   cpu      records        bytes   lost-bytes  truncations   collisions       faults  state\n";
	std::uint64_t records = 0, bytes = 0, lost = 0;
	for (std::size_t i = 0; i < rec.cpu_stats.size(); ++i) {
		const SpeRecordedCpu& c = rec.cpu_stats[i];
		s += pad_left(std::to_string(c.cpu), 6) + pad_left(std::to_string(c.records), 13) +
		     pad_left(std::to_string(c.bytes), 13) + pad_left(std::to_string(c.lost_bytes), 13) +
		     pad_left(std::to_string(c.truncations), 13) + pad_left(std::to_string(c.collisions), 13) +
		     pad_left(std::to_string(c.faults), 13) + "  " + format_spe_state(c.state);
		if (c.faults != 0)
			s += " (last PMBSR_EL1 " + hex(c.last_pmbsr) + ")";
		if (drained[i] != c.bytes)
			s += " (" + std::to_string(drained[i]) + " bytes read)";
		s += "\n";
		records += c.records;
		bytes += c.bytes;
		lost += c.lost_bytes;
	}
	s += "amupmu spe record: " + std::to_string(records) + " records, " + std::to_string(bytes) + " bytes in " +
	     std::to_string(rec.chunks.size()) + " chunks";
	if (lost != 0)
		s += ", " + std::to_string(lost) + " bytes lost (buffers full: --pages, --interval)";
	s += ", " + std::to_string(rec.maps.size()) + " mappings -> " + std::string{output} + "\n";
	return s;
}

std::string format_spe_dump(const SpeRecording& rec, std::string_view name)
{
	std::string out = "# " + std::string{name} + ": SPE backend: " + backend_label(rec.backend) + ", CPUs " +
			  rec.cpus + ", timer " + std::to_string(rec.timer_freq) + " Hz, pid " + std::to_string(rec.pid) +
			  "\n";
	out += "# config: flags " + hex(rec.config.flags, 1) + " enables " + hex(rec.config.enables, 2) + " pct " +
	       std::to_string(rec.config.pct) + " pmsfcr " + hex(rec.config.pmsfcr) + " pmsevfr " +
	       hex(rec.config.pmsevfr) + " pmsnevfr " + hex(rec.config.pmsnevfr) + " min_latency " +
	       std::to_string(rec.config.min_latency) + " interval " + std::to_string(rec.config.interval) +
	       " buf_pages " + std::to_string(rec.config.buf_pages) + "\n";
	for (const SpeRecordedCpu& c : rec.cpu_stats)
		out += "# cpu " + std::to_string(c.cpu) + ": " + std::to_string(c.records) + " records, " +
		       std::to_string(c.bytes) + " bytes, " + std::to_string(c.lost_bytes) + " lost bytes, " +
		       std::to_string(c.truncations) + " truncations, " + std::to_string(c.collisions) +
		       " collisions, " + std::to_string(c.faults) + " faults, state " + format_spe_state(c.state) +
		       ", MIDR_EL1 " + hex(c.midr, 8) + "\n";
	out += "\n";
	DumpCounts n;
	for (std::size_t k = 0; k < rec.chunks.size(); ++k) {
		const SpeChunk& c = rec.chunks[k];
		out += "# cpu " + std::to_string(c.cpu) + ", chunk " + std::to_string(k) + ", " +
		       std::to_string(c.data.size()) + " bytes\n";
		dump_chunk(out, c.data, n);
		n.bytes += c.data.size();
	}
	out += "# " + std::to_string(rec.chunks.size()) + " chunks, " + std::to_string(n.bytes) + " bytes: " +
	       std::to_string(n.records) + " records, " + std::to_string(n.packets) + " packets, " +
	       std::to_string(n.padding) + " padding bytes, " + std::to_string(n.unknown) + " unknown, " +
	       std::to_string(n.truncated) + " truncated\n";
	return out;
}

} // namespace amupmu::report
