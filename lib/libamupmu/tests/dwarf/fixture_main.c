// SPDX-License-Identifier: GPL-2.0
//
// The DWARF fixture of the symbolizer tests (host/test_dwarf.cpp): a shared
// object without libc, built with -g, never loaded. The tests find the
// lines marked "line:" here and ask the symbolizer for the functions'
// first instructions.
int amupmu_dw_util(int x);

__attribute__((noinline)) int amupmu_dw_hot(int x) { return amupmu_dw_util(x) * 3 + 1; } // line: amupmu_dw_hot
