// SPDX-License-Identifier: GPL-2.0
//
// What the board tests share: the live driver's Info and its online CPUs.
#pragma once

#include <amupmu/amupmu.hpp>

#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <vector>

namespace amupmu::board {

// The board runs under QEMU's -icount (run.sh -i puts icount1 in
// amupmu_board= on the kernel command line): guest time and cycles follow
// the instructions, not the host. Without it they follow the host clock,
// and a test may assert only what holds at any host speed (the accounting,
// counts that only grow), not minimum counts or rates.
inline bool icount()
{
	std::ifstream f{"/proc/cmdline"};
	std::string cmdline;
	std::getline(f, cmdline);
	return cmdline.find("/icount1") != std::string::npos;
}

// INFO of the loaded driver; fails the test when the device cannot be opened
inline Info live_info()
{
	int err = 0;
	auto dev = Device::try_open(default_device_path, &err);
	INFO(default_device_path << ": " << errno_text(err) << " -- load amupmu.ko");
	REQUIRE(dev);
	return dev->info();
}

inline std::vector<unsigned> online(const Info& info)
{
	std::vector<unsigned> cpus;
	for (const CpuInfo& c : info.cpus)
		if (c.online())
			cpus.push_back(c.cpu);
	return cpus;
}

} // namespace amupmu::board
