// SPDX-License-Identifier: GPL-2.0
//
// A strict recursive-descent JSON (RFC 8259) checker for the tests: the
// output of amupmu's JSON writer must parse. Also rejects duplicate keys.
#ifndef AMUPMU_TESTS_JSON_CHECK_HPP
#define AMUPMU_TESTS_JSON_CHECK_HPP

#include <set>
#include <string>
#include <string_view>

namespace amupmu::test {

class JsonChecker {
public:
	explicit JsonChecker(std::string_view text) : s_{text} {}

	/// Empty when the text is exactly one JSON value (whitespace around it
	/// allowed), else what is wrong and where.
	std::string error()
	{
		skip_ws();
		if (!parse_value(0))
			return message();
		skip_ws();
		if (pos_ != s_.size())
			fail("trailing characters");
		return message();
	}

private:
	static constexpr unsigned max_depth = 64;

	bool fail(std::string_view why)
	{
		if (why_.empty())
			why_ = std::string{why} + " at offset " + std::to_string(pos_);
		return false;
	}
	std::string message() const { return why_; }

	bool eof() const { return pos_ >= s_.size(); }
	char peek() const { return eof() ? '\0' : s_[pos_]; }
	bool eat(char c)
	{
		if (peek() != c)
			return false;
		++pos_;
		return true;
	}
	void skip_ws()
	{
		while (!eof() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r'))
			++pos_;
	}
	static bool is_digit(char c) { return c >= '0' && c <= '9'; }
	static bool is_hex(char c)
	{
		return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
	}

	bool parse_value(unsigned depth)
	{
		if (depth > max_depth)
			return fail("nesting too deep");
		switch (peek()) {
		case '{': return parse_object(depth + 1);
		case '[': return parse_array(depth + 1);
		case '"': {
			std::string ignored;
			return parse_string(ignored);
		}
		case 't': return parse_literal("true");
		case 'f': return parse_literal("false");
		case 'n': return parse_literal("null");
		default: return parse_number();
		}
	}

	bool parse_literal(std::string_view word)
	{
		if (s_.substr(pos_, word.size()) != word)
			return fail("bad literal");
		pos_ += word.size();
		return true;
	}

	bool parse_number()
	{
		eat('-');
		if (eat('0')) {
			if (is_digit(peek()))
				return fail("leading zero");
		} else if (is_digit(peek())) {
			while (is_digit(peek()))
				++pos_;
		} else {
			return fail("expected a value");
		}
		if (eat('.')) {
			if (!is_digit(peek()))
				return fail("digit expected after '.'");
			while (is_digit(peek()))
				++pos_;
		}
		if (eat('e') || eat('E')) {
			if (!eat('+'))
				eat('-');
			if (!is_digit(peek()))
				return fail("digit expected in exponent");
			while (is_digit(peek()))
				++pos_;
		}
		return true;
	}

	bool parse_string(std::string& out)
	{
		if (!eat('"'))
			return fail("expected '\"'");
		while (!eof()) {
			const char c = s_[pos_++];
			if (c == '"')
				return true;
			if (static_cast<unsigned char>(c) < 0x20)
				return fail("unescaped control character in string");
			if (c != '\\') {
				out += c;
				continue;
			}
			const char e = peek();
			++pos_;
			if (e == 'u') {
				for (int i = 0; i < 4; ++i, ++pos_)
					if (!is_hex(peek()))
						return fail("bad \\u escape");
				out += '?';
			} else if (std::string_view{"\"\\/bfnrt"}.find(e) == std::string_view::npos) {
				return fail("bad escape");
			} else {
				out += e;
			}
		}
		return fail("unterminated string");
	}

	bool parse_array(unsigned depth)
	{
		eat('[');
		skip_ws();
		if (eat(']'))
			return true;
		for (;;) {
			skip_ws();
			if (!parse_value(depth))
				return false;
			skip_ws();
			if (eat(']'))
				return true;
			if (!eat(','))
				return fail("expected ',' or ']'");
		}
	}

	bool parse_object(unsigned depth)
	{
		eat('{');
		skip_ws();
		if (eat('}'))
			return true;
		std::set<std::string> keys;
		for (;;) {
			skip_ws();
			std::string key;
			if (!parse_string(key))
				return false;
			if (!keys.insert(key).second)
				return fail("duplicate key \"" + key + "\"");
			skip_ws();
			if (!eat(':'))
				return fail("expected ':'");
			skip_ws();
			if (!parse_value(depth))
				return false;
			skip_ws();
			if (eat('}'))
				return true;
			if (!eat(','))
				return fail("expected ',' or '}'");
		}
	}

	std::string_view s_;
	std::size_t pos_ = 0;
	std::string why_;
};

/// Empty when text is well-formed JSON, else the first problem.
inline std::string json_error(std::string_view text)
{
	return JsonChecker{text}.error();
}

} // namespace amupmu::test

#endif
