// SPDX-License-Identifier: GPL-2.0
//
// The tool's files through open(2), read(2) and write(2) of its own: an
// error names the errno of the call that failed. After a failed
// std::fstream operation errno is unspecified (the library may have made
// other calls since), so no error message reads it there.
#ifndef AMUPMU_TOOL_FILE_HPP
#define AMUPMU_TOOL_FILE_HPP

#include <array>
#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>

namespace amupmu::cli {

/// The whole file; Error "open PATH" or "read PATH" with the errno of the
/// failing call.
[[nodiscard]] std::string read_file(const std::string& path);

/// Creates or truncates path (mode 0666 less the umask) and writes text;
/// Error "open PATH" or "write PATH" with the errno of the failing call.
void write_file(const std::string& path, std::string_view text);

/// An output file as a std::ostream, for output written as it comes (the
/// interval lines of stat and amu). A failed write(2) keeps its errno;
/// close() reports it.
class OutputFile : public std::ostream {
public:
	/// Error "open PATH" when open(2) fails.
	explicit OutputFile(const std::string& path);
	OutputFile(const OutputFile&) = delete;
	OutputFile& operator=(const OutputFile&) = delete;
	OutputFile(OutputFile&&) = delete;
	OutputFile& operator=(OutputFile&&) = delete;
	~OutputFile() override;

	/// Writes what is buffered and closes the file; Error "write PATH"
	/// with the errno of the first write(2) that failed.
	void close();

private:
	class Buf : public std::streambuf {
	public:
		explicit Buf(int fd) noexcept;
		int fd = -1;
		int err = 0;	///< errno of the first failed write(2)
		bool drain();

	protected:
		int_type overflow(int_type c) override;
		int sync() override;

	private:
		std::array<char, 8192> space_{};
	};
	std::string path_;
	Buf buf_;
};

} // namespace amupmu::cli

#endif
