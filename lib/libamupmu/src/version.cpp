// SPDX-License-Identifier: LGPL-2.1-or-later
//
// library_version(): compiled into the library, so that a program can
// tell the libamupmu.so it runs with from the headers it was built with.
#include <amupmu/version.hpp>

namespace amupmu {

LibraryVersion library_version() noexcept
{
	return {.version = version_string, .soversion = soversion};
}

} // namespace amupmu
