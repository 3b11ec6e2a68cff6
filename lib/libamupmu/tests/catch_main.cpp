// SPDX-License-Identifier: GPL-2.0
//
// Catch2 2.x main(). The TAP reporter is not part of the single header:
// including it here registers "-r tap" (used by the board runner).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#include <catch2/catch_reporter_tap.hpp>
