// SPDX-License-Identifier: LGPL-2.1-or-later
//
// A small streaming JSON writer (no third-party JSON library is needed).
#ifndef AMUPMU_REPORT_JSON_HPP
#define AMUPMU_REPORT_JSON_HPP

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace amupmu::report {

/// s as a JSON string literal, quotes included. Control characters, '"' and
/// '\' are escaped; bytes that are not valid UTF-8 become U+FFFD.
[[nodiscard]] std::string json_quote(std::string_view s);

/// Writes one JSON document. Calls must nest properly (key() before every
/// value inside an object, none inside an array); misuse throws
/// InvalidArgument (EINVAL). indent 0 writes everything on one line.
class JsonWriter {
public:
	explicit JsonWriter(unsigned indent = 2) : indent_{indent} {}

	JsonWriter& begin_object();
	JsonWriter& end_object();
	JsonWriter& begin_array();
	JsonWriter& end_array();
	JsonWriter& key(std::string_view name);

	JsonWriter& value(std::string_view s);
	JsonWriter& value(const char* s) { return value(std::string_view{s}); }
	JsonWriter& value(bool b) { return raw(b ? "true" : "false"); }
	template <std::integral T>
		requires(!std::same_as<T, bool>)
	JsonWriter& value(T v)
	{
		return raw(std::to_string(v));
	}
	/// A finite double in the shortest form that reads back the same
	/// (std::to_chars: "0.1", "1e+20"; no locale); NaN and infinities
	/// (not JSON) become null.
	JsonWriter& value(double d);
	JsonWriter& null() { return raw("null"); }

	/// key(name).value(v)
	template <typename T>
	JsonWriter& member(std::string_view name, const T& v)
	{
		return key(name).value(v);
	}

	/// The document; throws InvalidArgument while it is incomplete.
	[[nodiscard]] const std::string& str() const;

private:
	struct Level {
		bool object;
		unsigned count;
	};

	JsonWriter& raw(std::string_view token);
	JsonWriter& open(char bracket, bool object);
	JsonWriter& close(char bracket, bool object);
	void before_value();
	void newline(std::size_t depth);

	std::string out_;
	std::vector<Level> stack_;
	unsigned indent_;
	bool have_key_ = false;
	bool done_ = false;
};

} // namespace amupmu::report

#endif
