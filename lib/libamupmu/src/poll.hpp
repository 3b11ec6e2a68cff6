// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Internal: waiting for POLLIN on a session's file (the sample ring's
// SampleReader::wait() and the SPE buffers' SpeBuffer::wait()).
#ifndef AMUPMU_SRC_POLL_HPP
#define AMUPMU_SRC_POLL_HPP

#include <string>

namespace amupmu::detail {

/// poll() fd for POLLIN up to timeout_ms (-1: forever), again after EINTR.
/// True when readable, false on timeout. Throws Error named what on a poll
/// failure, POLLNVAL (EBADF) or POLLERR (EINVAL).
[[gnu::visibility("hidden")]] bool poll_in(int fd, int timeout_ms, const std::string& what);

} // namespace amupmu::detail

#endif
