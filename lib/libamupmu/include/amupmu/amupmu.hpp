// SPDX-License-Identifier: LGPL-2.1-or-later
//
// libamupmu: C++20 access to /dev/amupmu, the arm64 AMU / PMUv3 / SPE driver.
#ifndef AMUPMU_AMUPMU_HPP
#define AMUPMU_AMUPMU_HPP

#include <amupmu/affinity.hpp>
#include <amupmu/amu.hpp>
#include <amupmu/bits.hpp>
#include <amupmu/compensation.hpp>
#include <amupmu/core_events.hpp>
#include <amupmu/counters.hpp>
#include <amupmu/cpu.hpp>
#include <amupmu/decode.hpp>
#include <amupmu/device.hpp>
#include <amupmu/elf.hpp>
#include <amupmu/errata.hpp>
#include <amupmu/error.hpp>
#include <amupmu/events.hpp>
#include <amupmu/info.hpp>
#include <amupmu/metrics.hpp>
#include <amupmu/mmap_region.hpp>
#include <amupmu/monitor.hpp>
#include <amupmu/platform.hpp>
#include <amupmu/sample.hpp>
#include <amupmu/session.hpp>
#include <amupmu/spe.hpp>
#include <amupmu/spe_data_source.hpp>
#include <amupmu/spe_device.hpp>
#include <amupmu/spe_knobs.hpp>
#include <amupmu/spe_session.hpp>
#include <amupmu/topdown.hpp>
#include <amupmu/version.hpp>

#endif
