// SPDX-License-Identifier: GPL-2.0
#include "exposition.hpp"

#include <CivetServer.h>
#include <civetweb.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/registry.h>
#include <prometheus/summary.h>
#include <prometheus/text_serializer.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <string>
#include <utility>

namespace amupmu::cli {

// ---------------------------------------------------------------- negotiation

std::string_view trim(std::string_view s) noexcept
{
	constexpr std::string_view space = " \t\r";
	const auto b = s.find_first_not_of(space);
	if (b == std::string_view::npos)
		return {};
	return s.substr(b, s.find_last_not_of(space) - b + 1);
}

namespace {

bool iequal(std::string_view a, std::string_view b)
{
	return std::ranges::equal(a, b, [](char x, char y) {
		const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
		return lower(x) == lower(y);
	});
}

/// One media range of an Accept header: its type, version and q.
struct MediaRange {
	std::string_view type;
	std::string_view version;
	double q = 1;
};

MediaRange parse_range(std::string_view range)
{
	MediaRange r;
	const auto semi = range.find(';');
	r.type = trim(range.substr(0, semi));
	range = semi == std::string_view::npos ? std::string_view{} : range.substr(semi + 1);
	while (!range.empty()) {
		const auto next = range.find(';');
		const std::string_view param = range.substr(0, next);
		range = next == std::string_view::npos ? std::string_view{} : range.substr(next + 1);
		const auto eq = param.find('=');
		if (eq == std::string_view::npos)
			continue;
		const std::string_view key = trim(param.substr(0, eq));
		std::string_view value = trim(param.substr(eq + 1));
		if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
			value = value.substr(1, value.size() - 2);
		if (iequal(key, "q")) {
			double q = 0;
			const auto res = std::from_chars(value.data(), value.data() + value.size(), q);
			// a malformed q: the range is not acceptable
			r.q = res.ec == std::errc{} && res.ptr == value.data() + value.size() ? std::clamp(q, 0.0, 1.0) : 0;
		} else if (iequal(key, "version")) {
			r.version = value;
		}
	}
	return r;
}

} // namespace

Exposition negotiate_exposition(std::string_view accept)
{
	double om = 0, text = 0;
	while (!accept.empty()) {
		const auto comma = accept.find(',');
		const MediaRange r = parse_range(accept.substr(0, comma));
		accept = comma == std::string_view::npos ? std::string_view{} : accept.substr(comma + 1);
		if (iequal(r.type, "application/openmetrics-text")) {
			if (r.version.empty() || r.version == "1.0.0" || r.version == "0.0.1")
				om = std::max(om, r.q);
		} else if (iequal(r.type, "text/plain")) {
			if (r.version.empty() || r.version == "0.0.4")
				text = std::max(text, r.q);
		} else if (iequal(r.type, "text/*") || r.type == "*/*") {
			text = std::max(text, r.q);
		}
	}
	return om > 0 && om > text ? Exposition::openmetrics : Exposition::text;
}

std::string_view content_type(Exposition format) noexcept
{
	return format == Exposition::openmetrics ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
						 : "text/plain; version=0.0.4; charset=utf-8";
}

std::string_view to_string(Exposition format) noexcept
{
	return format == Exposition::openmetrics ? "openmetrics" : "text";
}

// ---------------------------------------------------------------- OpenMetrics

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

void number(std::ostream& out, double v)
{
	if (std::isnan(v)) {
		out << "NaN";
	} else if (std::isinf(v)) {
		out << (v < 0 ? "-Inf" : "+Inf");
	} else {
		std::array<char, 32> buf{};
		// integers (the counters) in all their digits, the rest in the
		// shortest form that reads back the same
		const auto r = v == std::trunc(v) && std::fabs(v) < 1e18
				       ? std::to_chars(buf.data(), buf.data() + buf.size(), static_cast<std::int64_t>(v))
				       : std::to_chars(buf.data(), buf.data() + buf.size(), v);
		out.write(buf.data(), r.ptr - buf.data());
	}
}

// \, " and newline escaped (label values, HELP)
void escaped(std::ostream& out, std::string_view s)
{
	for (const char c : s) {
		if (c == '\\')
			out << "\\\\";
		else if (c == '"')
			out << "\\\"";
		else if (c == '\n')
			out << "\\n";
		else
			out << c;
	}
}

/// One sample line: name+suffix{labels[,extra="value"]} value [timestamp].
void sample(std::ostream& out, std::string_view name, std::string_view suffix, const ClientMetric& m, double value,
	    std::string_view extra = {}, double extra_value = 0)
{
	out << name << suffix;
	if (!m.label.empty() || !extra.empty()) {
		out << '{';
		const char* sep = "";
		for (const ClientMetric::Label& l : m.label) {
			out << sep << l.name << "=\"";
			escaped(out, l.value);
			out << '"';
			sep = ",";
		}
		if (!extra.empty()) {
			// OpenMetrics' canonical number for le and quantile: a
			// float, so an integer bound is 16.0 (as client_golang and
			// client_python write it)
			out << sep << extra << "=\"";
			number(out, extra_value);
			if (std::isfinite(extra_value) && extra_value == std::trunc(extra_value))
				out << ".0";
			out << '"';
		}
		out << '}';
	}
	out << ' ';
	number(out, value);
	if (m.timestamp_ms != 0) {
		out << ' ';
		number(out, static_cast<double>(m.timestamp_ms) / 1000);
	}
	out << '\n';
}

std::string_view om_type(MetricType t)
{
	switch (t) {
	case MetricType::Counter:
		return "counter";
	case MetricType::Gauge:
		return "gauge";
	case MetricType::Summary:
		return "summary";
	case MetricType::Histogram:
		return "histogram";
	case MetricType::Untyped:
		break;
	}
	return "unknown";
}

} // namespace

void OpenMetricsSerializer::Serialize(std::ostream& out, const std::vector<MetricFamily>& families) const
{
	constexpr std::string_view total = "_total";
	for (const MetricFamily& f : families) {
		// a counter's family is named without _total, its samples with it
		std::string_view name = f.name;
		if (f.type == MetricType::Counter && name.ends_with(total) && name.size() > total.size())
			name.remove_suffix(total.size());
		out << "# TYPE " << name << ' ' << om_type(f.type) << '\n';
		if (!f.help.empty()) {
			out << "# HELP " << name << ' ';
			escaped(out, f.help);
			out << '\n';
		}
		for (const ClientMetric& m : f.metric) {
			switch (f.type) {
			case MetricType::Counter:
				sample(out, name, total, m, m.counter.value);
				break;
			case MetricType::Gauge:
				sample(out, name, "", m, m.gauge.value);
				break;
			case MetricType::Untyped:
				sample(out, name, "", m, m.untyped.value);
				break;
			case MetricType::Summary:
				for (const ClientMetric::Quantile& q : m.summary.quantile)
					sample(out, name, "", m, q.value, "quantile", q.quantile);
				sample(out, name, "_sum", m, m.summary.sample_sum);
				sample(out, name, "_count", m, static_cast<double>(m.summary.sample_count));
				break;
			case MetricType::Histogram:
				for (const ClientMetric::Bucket& b : m.histogram.bucket)
					sample(out, name, "_bucket", m, static_cast<double>(b.cumulative_count), "le",
					       b.upper_bound);
				sample(out, name, "_sum", m, m.histogram.sample_sum);
				sample(out, name, "_count", m, static_cast<double>(m.histogram.sample_count));
				break;
			}
		}
	}
	out << "# EOF\n";
}

// ---------------------------------------------------------------- the server

namespace {

bool gzip_accepted(mg_connection* conn)
{
	const char* enc = mg_get_header(conn, "Accept-Encoding");
	return enc != nullptr && std::strstr(enc, "gzip") != nullptr;
}

/// body gzip-compressed (zlib's gzip wrapper); empty when zlib fails.
std::string gzip(const std::string& body)
{
	z_stream zs{};
	// 16 + MAX_WBITS: the gzip header and trailer
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return {};
	std::string out(deflateBound(&zs, static_cast<uLong>(body.size())), '\0');
	zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
	zs.avail_in = static_cast<uInt>(body.size());
	zs.next_out = reinterpret_cast<Bytef*>(out.data());
	zs.avail_out = static_cast<uInt>(out.size());
	const int ret = deflate(&zs, Z_FINISH);
	out.resize(zs.total_out);
	deflateEnd(&zs);
	return ret == Z_STREAM_END ? out : std::string{};
}

} // namespace

class MetricsServer::Handler final : public CivetHandler {
public:
	explicit Handler(std::vector<std::shared_ptr<prometheus::Collectable>> collectables)
		: collectables_{std::move(collectables)},
		  bytes_{prometheus::BuildCounter()
				 .Name("exposer_transferred_bytes_total")
				 .Help("Transferred bytes to metrics services")
				 .Register(*registry_)
				 .Add({})},
		  scrapes_{prometheus::BuildCounter()
				   .Name("exposer_scrapes_total")
				   .Help("Number of times metrics were scraped")
				   .Register(*registry_)
				   .Add({})},
		  latencies_{prometheus::BuildSummary()
				     .Name("exposer_request_latencies")
				     .Help("Latencies of serving scrape requests, in microseconds")
				     .Register(*registry_)
				     .Add({}, prometheus::Summary::Quantiles{{0.5, 0.05}, {0.9, 0.01}, {0.99, 0.001}})},
		  by_format_{prometheus::BuildCounter()
				     .Name("amupmu_exporter_scrapes_total")
				     .Help("Scrapes served, by the format the scraper's Accept header chose (text: "
					   "Prometheus's text format 0.0.4, openmetrics: OpenMetrics 1.0.0)")
				     .Register(*registry_)}
	{
		for (const Exposition e : {Exposition::text, Exposition::openmetrics})
			by_format_.Add({{"format", std::string{to_string(e)}}});
	}

	bool handleGet(CivetServer* /*server*/, mg_connection* conn) override
	{
		const auto t0 = std::chrono::steady_clock::now();
		const char* accept = mg_get_header(conn, "Accept");
		const Exposition format = negotiate_exposition(accept != nullptr ? accept : "");
		std::vector<prometheus::MetricFamily> families = registry_->Collect();
		for (const auto& c : collectables_) {
			std::vector<prometheus::MetricFamily> more = c->Collect();
			families.insert(families.end(), std::make_move_iterator(more.begin()),
					std::make_move_iterator(more.end()));
		}
		std::string body = format == Exposition::openmetrics ? OpenMetricsSerializer{}.Serialize(families)
								     : prometheus::TextSerializer{}.Serialize(families);
		std::string compressed = gzip_accepted(conn) ? gzip(body) : std::string{};
		const bool gz = !compressed.empty();
		const std::string& sent = gz ? compressed : body;
		mg_printf(conn,
			  "HTTP/1.1 200 OK\r\nContent-Type: %s\r\n%sVary: Accept, Accept-Encoding\r\n"
			  "Content-Length: %zu\r\n\r\n",
			  std::string{content_type(format)}.c_str(), gz ? "Content-Encoding: gzip\r\n" : "",
			  sent.size());
		mg_write(conn, sent.data(), sent.size());
		bytes_.Increment(static_cast<double>(sent.size()));
		scrapes_.Increment();
		by_format_.Add({{"format", std::string{to_string(format)}}}).Increment();
		const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - t0;
		latencies_.Observe(took.count());
		return true;
	}

private:
	std::vector<std::shared_ptr<prometheus::Collectable>> collectables_;
	std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
	prometheus::Counter& bytes_;
	prometheus::Counter& scrapes_;
	prometheus::Summary& latencies_;
	prometheus::Family<prometheus::Counter>& by_format_;
};

MetricsServer::MetricsServer(const std::vector<std::string>& options,
			     std::vector<std::shared_ptr<prometheus::Collectable>> collectables)
	: handler_{std::make_unique<Handler>(std::move(collectables))},
	  server_{std::make_unique<CivetServer>(options)}
{
	server_->addHandler("/metrics", handler_.get());
}

MetricsServer::~MetricsServer()
{
	// the server's threads stop before the handler goes
	server_.reset();
}

std::vector<int> MetricsServer::ports() const
{
	return server_->getListeningPorts();
}

} // namespace amupmu::cli
