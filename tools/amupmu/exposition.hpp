// SPDX-License-Identifier: GPL-2.0
//
// amupmu exporter's HTTP side: /metrics served by civetweb (Debian's
// libcivetweb-dev, the server prometheus-cpp's own Exposer runs on) from
// prometheus-cpp collectables, in the format the scraper's Accept header
// asks for: Prometheus's text format 0.0.4 (prometheus::TextSerializer) or
// OpenMetrics 1.0.0 (OpenMetricsSerializer, a prometheus::Serializer),
// gzip-compressed when Accept-Encoding allows it. prometheus-cpp 1.0's
// Exposer serves the text format only, whatever Accept asks.
#ifndef AMUPMU_TOOL_EXPOSITION_HPP
#define AMUPMU_TOOL_EXPOSITION_HPP

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>
#include <prometheus/serializer.h>

#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

class CivetServer;

namespace amupmu::cli {

/// s without its leading and trailing blanks (spaces, tabs, CRs): an
/// HTTP header's parameters, the exporter's configuration lines.
[[nodiscard]] std::string_view trim(std::string_view s) noexcept;

/// The formats /metrics serves.
enum class Exposition {
	text,		///< Prometheus's text format 0.0.4
	openmetrics,	///< OpenMetrics 1.0.0 (text)
};

/// The format for an Accept header (empty: none was sent), by the media
/// ranges' q values: OpenMetrics (application/openmetrics-text, version
/// 1.0.0, 0.0.1 or none) when its q is above the text format's
/// (text/plain with version 0.0.4 or none, text/*, */*), else the text
/// format, the default. Prometheus asks for OpenMetrics first.
[[nodiscard]] Exposition negotiate_exposition(std::string_view accept);

/// The Content-Type of a format, with its version.
[[nodiscard]] std::string_view content_type(Exposition format) noexcept;

/// "text" | "openmetrics" (the format label of the exporter's scrape counter).
[[nodiscard]] std::string_view to_string(Exposition format) noexcept;

/// OpenMetrics 1.0.0's text format of prometheus-cpp's families: # TYPE
/// and # HELP (escaped), a counter's family named without its _total and
/// its samples with it, untyped as unknown, summaries and histograms with
/// their _sum and _count, timestamps in seconds, NaN and +Inf/-Inf as the
/// specification spells them, and the closing # EOF.
class OpenMetricsSerializer final : public prometheus::Serializer {
public:
	using Serializer::Serialize;
	void Serialize(std::ostream& out, const std::vector<prometheus::MetricFamily>& families) const override;
};

/// The HTTP endpoint: GET /metrics collects every collectable (each
/// scrape) and answers in the negotiated format. Its own metrics, as
/// prometheus-cpp's Exposer names them: exposer_scrapes_total,
/// exposer_transferred_bytes_total, exposer_request_latencies (µs), and
/// amupmu_exporter_scrapes_total{format}.
class MetricsServer {
public:
	/// options: civetweb's (listening_ports, num_threads, ...). Throws
	/// std::runtime_error (CivetException) when it cannot listen.
	MetricsServer(const std::vector<std::string>& options,
		      std::vector<std::shared_ptr<prometheus::Collectable>> collectables);
	~MetricsServer();
	MetricsServer(const MetricsServer&) = delete;
	MetricsServer& operator=(const MetricsServer&) = delete;
	MetricsServer(MetricsServer&&) = delete;
	MetricsServer& operator=(MetricsServer&&) = delete;

	/// The ports bound (port 0 asked: the one the system picked).
	[[nodiscard]] std::vector<int> ports() const;

private:
	class Handler;
	std::unique_ptr<Handler> handler_;	///< outlives the server's threads
	std::unique_ptr<CivetServer> server_;
};

} // namespace amupmu::cli

#endif
