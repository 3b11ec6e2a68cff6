// SPDX-License-Identifier: LGPL-2.1-or-later
#include "attrfile.hpp"

#include <array>
#include <cerrno>

#include <fcntl.h>
#include <unistd.h>

namespace amupmu::detail {

int write_attr(const std::filesystem::path& path, std::string_view value)
{
	const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return errno;
	const ssize_t n = ::write(fd, value.data(), value.size());
	int err = n < 0 ? errno : (static_cast<std::size_t>(n) != value.size() ? EIO : 0);
	if (::close(fd) && !err)
		err = errno;
	return err;
}

int read_attr(const std::filesystem::path& path, std::string& out)
{
	const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	out.clear();
	std::array<char, 4096> buf{};
	int err = 0;
	while (true) {
		const ssize_t n = ::read(fd, buf.data(), buf.size());
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			err = errno;
		if (n <= 0)
			break;
		out.append(buf.data(), static_cast<std::size_t>(n));
	}
	::close(fd);
	return err;
}

} // namespace amupmu::detail
