// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/error.hpp>
#include <amupmu/report/json.hpp>
#include <amupmu/text/escape.hpp>

#include <cerrno>
#include <charconv>
#include <cmath>

namespace amupmu::report {

using text::utf8_length;

std::string json_quote(std::string_view s)
{
	static constexpr char digits[] = "0123456789abcdef";
	std::string out;
	out.reserve(s.size() + 2);
	out += '"';
	for (std::size_t i = 0; i < s.size();) {
		const auto c = static_cast<unsigned char>(s[i]);
		switch (c) {
		case '"': out += "\\\""; break;
		case '\\': out += "\\\\"; break;
		case '\b': out += "\\b"; break;
		case '\f': out += "\\f"; break;
		case '\n': out += "\\n"; break;
		case '\r': out += "\\r"; break;
		case '\t': out += "\\t"; break;
		default:
			if (c < 0x20) {
				out += "\\u00";
				out += digits[c >> 4];
				out += digits[c & 0xF];
			} else if (const std::size_t len = utf8_length(s, i); len != 0) {
				out.append(s.substr(i, len));
				i += len;
				continue;
			} else {
				out += "\\ufffd";
			}
		}
		++i;
	}
	out += '"';
	return out;
}

void JsonWriter::newline(std::size_t depth)
{
	if (indent_ == 0)
		return;
	out_ += '\n';
	out_.append(depth * indent_, ' ');
}

void JsonWriter::before_value()
{
	if (done_)
		throw InvalidArgument{"JsonWriter: value after the end of the document", EINVAL};
	if (stack_.empty())
		return;
	Level& top = stack_.back();
	if (top.object) {
		if (!have_key_)
			throw InvalidArgument{"JsonWriter: object member without key()", EINVAL};
		have_key_ = false;
		return;
	}
	if (top.count++ != 0)
		out_ += ',';
	newline(stack_.size());
}

JsonWriter& JsonWriter::raw(std::string_view token)
{
	before_value();
	out_ += token;
	done_ = stack_.empty();
	return *this;
}

JsonWriter& JsonWriter::value(double d)
{
	if (!std::isfinite(d))
		return null();
	// the shortest form that reads back the same, whatever the locale
	char buf[32];
	const auto r = std::to_chars(buf, buf + sizeof(buf), d);
	return raw({buf, r.ptr});
}

JsonWriter& JsonWriter::value(std::string_view s)
{
	return raw(json_quote(s));
}

JsonWriter& JsonWriter::key(std::string_view name)
{
	if (stack_.empty() || !stack_.back().object || have_key_)
		throw InvalidArgument{"JsonWriter: key() outside an object or twice", EINVAL};
	if (stack_.back().count++ != 0)
		out_ += ',';
	newline(stack_.size());
	out_ += json_quote(name);
	out_ += indent_ == 0 ? ":" : ": ";
	have_key_ = true;
	return *this;
}

JsonWriter& JsonWriter::open(char bracket, bool object)
{
	before_value();
	out_ += bracket;
	stack_.push_back(Level{object, 0});
	return *this;
}

JsonWriter& JsonWriter::close(char bracket, bool object)
{
	if (stack_.empty() || stack_.back().object != object || have_key_)
		throw InvalidArgument{"JsonWriter: unbalanced end_object()/end_array()", EINVAL};
	const bool empty = stack_.back().count == 0;
	stack_.pop_back();
	if (!empty)
		newline(stack_.size());
	out_ += bracket;
	done_ = stack_.empty();
	return *this;
}

JsonWriter& JsonWriter::begin_object() { return open('{', true); }
JsonWriter& JsonWriter::end_object() { return close('}', true); }
JsonWriter& JsonWriter::begin_array() { return open('[', false); }
JsonWriter& JsonWriter::end_array() { return close(']', false); }

const std::string& JsonWriter::str() const
{
	if (!done_)
		throw InvalidArgument{"JsonWriter: document incomplete", EINVAL};
	return out_;
}

} // namespace amupmu::report
