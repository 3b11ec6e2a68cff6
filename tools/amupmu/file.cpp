// SPDX-License-Identifier: GPL-2.0
#include "file.hpp"

#include <amupmu/error.hpp>

#include <cerrno>

#include <fcntl.h>
#include <unistd.h>

namespace amupmu::cli {

namespace {

int open_output(const std::string& path)
{
	const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0)
		throw Error{"open " + path, errno};
	return fd;
}

// 0 when all of it went, else the errno of the write(2) that failed
int write_all(int fd, const char* p, std::size_t n)
{
	while (n) {
		const ssize_t w = ::write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return errno;
		p += w;
		n -= static_cast<std::size_t>(w);
	}
	return 0;
}

} // namespace

std::string read_file(const std::string& path)
{
	const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		throw Error{"open " + path, errno};
	std::string text;
	std::array<char, 65536> buf{};
	for (;;) {
		const ssize_t n = ::read(fd, buf.data(), buf.size());
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			const int err = errno;
			::close(fd);
			throw Error{"read " + path, err};
		}
		if (n == 0)
			break;
		text.append(buf.data(), static_cast<std::size_t>(n));
	}
	::close(fd);
	return text;
}

void write_file(const std::string& path, std::string_view text)
{
	const int fd = open_output(path);
	int err = write_all(fd, text.data(), text.size());
	if (::close(fd) != 0 && err == 0)
		err = errno;
	if (err)
		throw Error{"write " + path, err};
}

OutputFile::Buf::Buf(int fd_) noexcept : fd{fd_}
{
	setp(space_.data(), space_.data() + space_.size());
}

bool OutputFile::Buf::drain()
{
	const auto n = static_cast<std::size_t>(pptr() - pbase());
	setp(space_.data(), space_.data() + space_.size());
	if (err == 0 && fd >= 0)
		err = write_all(fd, space_.data(), n);
	return err == 0;
}

OutputFile::Buf::int_type OutputFile::Buf::overflow(int_type c)
{
	if (!drain())
		return traits_type::eof();
	if (!traits_type::eq_int_type(c, traits_type::eof()))
		sputc(traits_type::to_char_type(c));
	return traits_type::not_eof(c);
}

int OutputFile::Buf::sync()
{
	return drain() ? 0 : -1;
}

OutputFile::OutputFile(const std::string& path) : std::ostream{nullptr}, path_{path}, buf_{open_output(path)}
{
	rdbuf(&buf_);
}

OutputFile::~OutputFile()
{
	// what close() did not see goes out still; an error, unreported (a
	// throw is already on its way)
	if (buf_.fd >= 0) {
		buf_.drain();
		::close(buf_.fd);
	}
}

void OutputFile::close()
{
	buf_.drain();
	const int fd = buf_.fd;
	buf_.fd = -1;
	if (fd >= 0 && ::close(fd) != 0 && buf_.err == 0)
		buf_.err = errno;
	if (buf_.err)
		throw Error{"write " + path_, buf_.err};
}

} // namespace amupmu::cli
