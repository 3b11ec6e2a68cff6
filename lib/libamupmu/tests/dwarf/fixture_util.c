// SPDX-License-Identifier: GPL-2.0
//
// The DWARF fixture's second compilation unit (fixture_main.c).
__attribute__((noinline)) int amupmu_dw_util(int x) { return x * 7 + 2; } // line: amupmu_dw_util
