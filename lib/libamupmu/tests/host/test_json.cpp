// SPDX-License-Identifier: GPL-2.0
#include "json_check.hpp"

#include <amupmu/report/json.hpp>

#include <catch2/catch.hpp>

#include <amupmu/error.hpp>

using namespace amupmu;
using namespace amupmu::report;
using test::json_error;

TEST_CASE("json_quote escapes what JSON requires", "[host][json]")
{
	CHECK(json_quote("abc") == R"("abc")");
	CHECK(json_quote("") == R"("")");
	CHECK(json_quote(R"(a"b\c)") == R"("a\"b\\c")");
	CHECK(json_quote("\n\t\r\b\f") == R"("\n\t\r\b\f")");
	CHECK(json_quote(std::string_view{"\x01\x1f\x00", 3}) == R"("\u0001\u001f\u0000")");
	CHECK(json_quote("/ \x7f") == "\"/ \x7f\"");
}

TEST_CASE("json_quote keeps valid UTF-8 and replaces invalid bytes", "[host][json]")
{
	CHECK(json_quote("\xc3\xa9") == "\"\xc3\xa9\"");			// é
	CHECK(json_quote("\xe2\x82\xac") == "\"\xe2\x82\xac\"");		// €
	CHECK(json_quote("\xf0\x9f\x98\x80") == "\"\xf0\x9f\x98\x80\"");	// U+1F600
	CHECK(json_quote("\xff") == R"("\ufffd")");
	CHECK(json_quote("a\xc3") == R"("a\ufffd")");				// truncated
	CHECK(json_quote("\xc0\xaf") == R"("\ufffd\ufffd")");			// overlong
	CHECK(json_quote("\xed\xa0\x80") == R"("\ufffd\ufffd\ufffd")");	// surrogate
	CHECK(json_quote("\xf4\x90\x80\x80") == R"("\ufffd\ufffd\ufffd\ufffd")");	// > U+10FFFF
	for (unsigned c = 0; c < 256; ++c) {
		const char byte = static_cast<char>(c);
		CAPTURE(c);
		CHECK(json_error(json_quote(std::string_view{&byte, 1})).empty());
	}
}

TEST_CASE("JsonWriter output", "[host][json]")
{
	SECTION("compact")
	{
		JsonWriter w{0};
		w.begin_object()
			.member("a", 1)
			.key("b").begin_array().value(true).null().value("x").value(-3).end_array()
			.key("c").begin_object().end_object()
			.key("d").begin_array().end_array()
			.member("e", std::uint64_t{18446744073709551615u})
			.end_object();
		CHECK(w.str() == R"({"a":1,"b":[true,null,"x",-3],"c":{},"d":[],"e":18446744073709551615})");
	}
	SECTION("indented")
	{
		JsonWriter w;
		w.begin_object().member("k", "v").key("l").begin_array().value(1).value(2).end_array().end_object();
		CHECK(w.str() == "{\n  \"k\": \"v\",\n  \"l\": [\n    1,\n    2\n  ]\n}");
		CHECK(json_error(w.str()).empty());
	}
	SECTION("a scalar document")
	{
		JsonWriter w;
		w.value("only");
		CHECK(w.str() == R"("only")");
	}
	SECTION("keys are escaped too")
	{
		JsonWriter w{0};
		w.begin_object().member("q\"uote", false).end_object();
		CHECK(w.str() == R"({"q\"uote":false})");
	}
}

TEST_CASE("JsonWriter refuses malformed documents", "[host][json]")
{
	JsonWriter w;
	SECTION("member without key")
	{
		w.begin_object();
		CHECK_THROWS_AS(w.value(1), InvalidArgument);
	}
	SECTION("key inside an array")
	{
		w.begin_array();
		CHECK_THROWS_AS(w.key("k"), InvalidArgument);
	}
	SECTION("two keys in a row")
	{
		w.begin_object().key("a");
		CHECK_THROWS_AS(w.key("b"), InvalidArgument);
	}
	SECTION("mismatched close")
	{
		w.begin_object();
		CHECK_THROWS_AS(w.end_array(), InvalidArgument);
	}
	SECTION("dangling key")
	{
		w.begin_object().key("a");
		CHECK_THROWS_AS(w.end_object(), InvalidArgument);
	}
	SECTION("incomplete document")
	{
		w.begin_array();
		CHECK_THROWS_AS(w.str(), InvalidArgument);
	}
	SECTION("second top-level value")
	{
		w.begin_array().end_array();
		CHECK_THROWS_AS(w.value(1), InvalidArgument);
	}
}

TEST_CASE("the test's JSON checker itself", "[host][json]")
{
	for (const std::string_view good : {
		     R"({})", R"([])", R"( {"a": [1, -2.5e+3, true, false, null, "x\u00e9\n"]} )",
		     R"(0)", R"("s")", R"({"a":{"b":{}}})", R"([0.5, 1E9, -0])",
	     }) {
		CAPTURE(good);
		CHECK(json_error(good).empty());
	}
	for (const std::string_view bad : {
		     R"()", R"({)", R"([1,])", R"({"a" 1})", R"(01)", R"("\x")", R"(nul)",
		     R"({}{})", "\"a\x01\"", R"({"a":1,"a":2})", R"([.5])", R"({a:1})", R"("\u12")",
		     R"([1 2])", R"(1.)", R"(-)", R"('a')",
	     }) {
		CAPTURE(bad);
		CHECK_FALSE(json_error(bad).empty());
	}
}
