// SPDX-License-Identifier: GPL-2.0
//
// What the board tests share: the live driver's Info and its online CPUs.
#pragma once

#include <amupmu/amupmu.hpp>

#include <catch2/catch.hpp>

#include <vector>

namespace amupmu::board {

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
