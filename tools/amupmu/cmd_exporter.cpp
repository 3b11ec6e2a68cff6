// SPDX-License-Identifier: GPL-2.0
//
// amupmu exporter: the AMU, the PMU events of the configuration and the
// driver's health over HTTP for Prometheus (civetweb serving prometheus-cpp's
// families in the negotiated format: exposition.hpp), read once per scrape
// (exporter.hpp).
#include "cli.hpp"
#include "file.hpp"
#include "signal_wait.hpp"

#if AMUPMU_HAVE_EXPORTER
#include "exporter.hpp"

#include "exposition.hpp"

#include <amupmu/errata.hpp>
#endif

#include <iostream>
#include <memory>
#include <string>

namespace amupmu::cli {

namespace {

constexpr std::string_view usage = R"(Usage: amupmu exporter [--listen ADDR:PORT] [--config FILE]

Serve the Activity Monitors of every CPU, the PMU events of the
configuration counted on every CPU, and the amupmu driver's health to
Prometheus, at http://ADDR:PORT/metrics (Prometheus's text format 0.0.4,
or OpenMetrics 1.0.0 when the scraper's Accept header prefers it, as
Prometheus does; gzip when the scraper accepts it). The counters are read once per scrape:
one AMUPMU_AMU_READ, one AMUPMU_PMU_READ of every CPU, the netlink
family's status. Runs until SIGINT or SIGTERM.

  amupmu_amu_{core_cycles,constant_cycles,instructions_retired,
    memory_stall_cycles}_total{cpu}     the AMU's group 0 counters
  amupmu_amu_auxiliary_events_total{cpu,event}  group 1
  amupmu_cpu_info{cpu,midr,...,errata}  amupmu_driver_info{...}
  amupmu_pmu_events_total{cpu,event}    the configured PMU events (raw),
    with _compensated_total where an erratum of the CPU applies and
    amupmu_pmu_{enabled,running}_seconds_total
  amupmu_spe_latency_cycles{cpu,op}     with spe = on: histograms of the
    sampled operations' total latency (load, store, branch, other)
  amupmu_netlink_events_{dropped,undelivered}_total, amupmu_sessions,
    amupmu_exporter_scrape_{duration_seconds,errors_total}, amupmu_up

A CPU's series stop while it is offline and resume when it is back; all
but amupmu_up stop while the module is not loaded. The device is opened
for each scrape, so the module can be unloaded under a running exporter
that counts no PMU events and serves no SPE histograms; its PMU or SPE
session keeps it loaded, as any open session does. Reading the counters needs CAP_PERFMON (the systemd unit
amupmu-exporter.service gives its user only that).

Options:
  --listen ADDR:PORT  where to listen (default :10140, every address;
                      127.0.0.1:10140 loopback only, [::1]:10140 IPv6;
                      port 0: one the system picks, printed at start)
  --config FILE       the configuration, KEY = VALUE lines:
                        listen = ADDR:PORT
                        device = /dev/amupmu
                        events = inst_retired,cpu_cycles   (PMU events,
                                 names as amupmu stat -e takes them;
                                 default none: no PMU session)
                        multiplex = no     (shared mode: rotate events)
                        compensate = yes   (the erratum-compensated values)
                        netlink = yes      (the driver's health)
                        threads = 2        (HTTP worker threads)
                        spe = off          (SPE latency histograms: on
                                 starts an SPE session on every CPU)
                        spe_interval = 1048576  (operations a sample)
                        spe_kernel = no    (the kernel's operations too)
                        spe_buffer_pages = 16   (per CPU)
                      --listen overrides the file's listen
  -h, --help          show this help
)";

struct Options {
	std::optional<std::string> listen;
	std::optional<std::string> config;
};

Options parse(Args args)
{
	Options o;
	for (std::size_t i = 0; i < args.size(); ++i) {
		if (auto v = option_value(args, i, "--listen"))
			o.listen = std::string{*v};
		else if (auto v = option_value(args, i, "--config"))
			o.config = std::string{*v};
		else
			throw UsageError{"unknown argument '" + std::string{args[i]} + "'"};
	}
	return o;
}

#if AMUPMU_HAVE_EXPORTER
int run(const Options& o)
{
	ExporterConfig config;
	if (o.config)
		config = parse_exporter_config(read_file(*o.config), *o.config);
	if (o.listen)
		config.listen = *o.listen;
	const std::string ports = civetweb_listen(config.listen);

	CompensationOptions compensation{.enabled = config.compensate, .exc_undef_ec0 = {}, .calibration = {}};
	if (config.compensate)
		compensation.calibration = load_calibration(default_calibration_path());

	const SignalWait signals{SIGINT, SIGTERM};
	const auto collector = std::make_shared<ExporterCollector>(std::make_unique<DriverSource>(config),
								   std::move(compensation));
	std::unique_ptr<MetricsServer> server;
	try {
		// a slow or stuck client holds one worker for 10 s at most
		server = std::make_unique<MetricsServer>(
			std::vector<std::string>{"listening_ports", ports, "num_threads", std::to_string(config.threads),
						 "request_timeout_ms", "10000"},
			std::vector<std::shared_ptr<prometheus::Collectable>>{collector});
	} catch (const std::exception& e) {
		throw Failure{e, "cannot listen on " + config.listen, exit_error, "amupmu exporter"};
	}
	// the ports bound (port 0: the one the system picked)
	std::cerr << "amupmu exporter: listening on";
	const auto colon = config.listen.rfind(':');
	for (const int port : server->ports())
		std::cerr << " " << config.listen.substr(0, colon) << ":" << port;
	std::cerr << ", /metrics";
	if (!config.events.empty()) {
		std::cerr << "; PMU events:";
		for (const std::string& e : config.events)
			std::cerr << " " << e;
	}
	std::cerr << std::endl;
	const int sig = signals.wait(-1);
	std::cerr << "amupmu exporter: stopped by signal " << sig << std::endl;
	return exit_ok;
}
#else
int run(const Options&)
{
	throw Failure{std::runtime_error{"this amupmu was built without the exporter"},
		      "its build had no prometheus-cpp (Debian's prometheus-cpp-dev; a static build cannot have it, "
		      "Debian ships it as shared libraries only)",
		      exit_error, "amupmu exporter"};
}
#endif

} // namespace

const Command exporter_command{
	.name = "exporter",
	.summary = "serve AMU, PMU and driver metrics to Prometheus over HTTP",
	.usage = usage,
	.run = parse_then_run<parse, run>,
};

} // namespace amupmu::cli
