# SPDX-License-Identifier: GPL-2.0
#
# amupmu spe report: usage errors, missing and malformed recordings, and the
# report of spe-report.data (written by the host tests' "[generate]" case:
# AMUPMU_SPE_FIXTURE=FILE amupmu_host_tests "[generate]"): 17 records of a
# mock recording, CPU 0 a Neoverse N1, CPU 1 of an unknown MIDR, one record
# with an unknown packet. spe-report-cut.data is its first 700 bytes.
# Included from tools/amupmu/CMakeLists.txt (amupmu_cli_test()).

set(spe_report_data ${CMAKE_CURRENT_SOURCE_DIR}/tests/spe-report.data)

amupmu_cli_test(spe_report_help 0
	"Usage: amupmu spe report \\[-i FILE \\| FILE\\].*--top N.*--sort KEY.*--per-cpu.*--json.*--svg SVGFILE.*--ascii"
	spe report --help)
amupmu_cli_test(spe_report_missing_file 1 "^amupmu: open /nonexistent.data: No such file or directory \\(ENOENT\\)\n$"
	spe report /nonexistent.data)
amupmu_cli_test(spe_report_default_file 1 "^amupmu: open amupmu-spe.data: No such file or directory \\(ENOENT\\)\n$"
	spe report --top 3)
amupmu_cli_test(spe_report_not_a_recording 1
	"^amupmu: [^\n]*cli.cpp: SPE recording line 1: not an amupmu SPE recording"
	spe report -i ${CMAKE_CURRENT_SOURCE_DIR}/cli.cpp)
amupmu_cli_test(spe_report_truncated 1
	"^amupmu: [^\n]*spe-report-cut.data: SPE recording line 11: data chunk cut short"
	spe report ${CMAKE_CURRENT_SOURCE_DIR}/tests/spe-report-cut.data)
# a failed write(2) reports its own errno
amupmu_cli_test(spe_report_svg_full 1 "^amupmu: write /dev/full: No space left on device \\(ENOSPC\\)\n$"
	spe report --svg /dev/full ${spe_report_data})
amupmu_cli_test(spe_report_directory 1 "^amupmu: read [^\n]*/tests: Is a directory \\(EISDIR\\)\n$"
	spe report ${CMAKE_CURRENT_SOURCE_DIR}/tests)
amupmu_cli_test(spe_report_bad_option 1 "amupmu spe: unknown argument '--bogus'" spe report --bogus)
amupmu_cli_test(spe_report_bad_sort 1 "--sort needs count or latency, not 'size'" spe report --sort size ${spe_report_data})
amupmu_cli_test(spe_report_bad_top 1 "option '--top' needs a number, not 'x'" spe report --top x)
amupmu_cli_test(spe_report_zero_top 1 "--top needs at least 1" spe report --top=0 ${spe_report_data})
amupmu_cli_test(spe_report_two_files 1 "more than one recording \\('a', 'b'\\)" spe report a b)
amupmu_cli_test(spe_report_svg_unwritable 1 "^amupmu: open /nonexistent/x.svg: No such file or directory"
	spe report --svg /nonexistent/x.svg ${spe_report_data})

# the expected report, in its parts
amupmu_cli_test(spe_report_text 0
	"^# amupmu spe report: 17 records from CPUs 0-1, backend: mock SPE model \\(test build\\)\n# command: \\./spe-demo --loads \\(pid 4242\\)\n# records: 16 complete, 1 incomplete \\(ended by: 4 END, 12 TIMESTAMP, 0 buffer end, 0 truncated packet, 1 resync after an unknown packet\\)\n# decoded: 679 bytes, 1 unknown packets, 1 bytes skipped, 0 bytes of padding\n# lost: 128 bytes, 1 truncations, 0 collisions, 0 faults\n.*     0        15           0        0         128      1     0       0       14       32       35  Arm Neoverse-N1 r3p1 \\(arm-common\\)\n.*# total latency \\(cycles from dispatch to completion\\): 16 records\n#   p50 14  p90 35  p99 300  p99\\.9 300  max 300  mean 33\\.38\n.*         16-31           5   31\\.25%  ########################################\n.*    76\\.47%          13      18\\.5       32  LD GP-REG\n    17\\.65%           3       4\\.0        4  B IND CR-RET\n.*#   CPU 1: implementer 0x00 part 0x051 r0p0: encoding not known, raw codes only\n.*    69\\.23%           9      20\\.0       35  L1D \\(0x0\\) \\[arm-common\\]\n.*    20\\.00%           3  MISPRED\n.*    76\\.47%          13      40\\.2       35  \\[\\.\\] \\[unknown\\]  /nonexistent/spe-demo\n    17\\.65%           3       4\\.0        4  \\[k\\] \\[unknown\\]  \\[kernel\\]\n.*    23\\.53%           4      15\\.5       29  0x400100  el0  \\[\\.\\] \\[unknown\\]  /nonexistent/spe-demo\n.*    38\\.46%           5      65\\.2      300  0x000000007fff0000  L1D \\(0x0\\) 60\\.00%\n"
	spe report --ascii --top 3 ${spe_report_data})
amupmu_cli_test(spe_report_sort_latency 0
	"# hottest PCs \\(1 of 7\\)\n[^\n]*\n     5\\.88%           1     300\\.0      300  0x400200  el0 "
	spe report --sort=latency --top 1 -i ${spe_report_data})
amupmu_cli_test(spe_report_per_cpu 0
	"\n# amupmu spe report: 15 records of CPU 0, backend: mock SPE model \\(test build\\)\n.*\n# amupmu spe report: 2 records of CPU 1, backend: mock SPE model"
	spe report --per-cpu ${spe_report_data})
amupmu_cli_test(spe_report_json 0
	"^{\n  \"backend\": \"mock\",\n  \"backend_description\": \"mock SPE model \\(test build\\)\",.*\"p99_9\": 300,.*\"hot_cache_lines\""
	spe report --json ${spe_report_data})

# the SVG is well-formed XML (xmllint, where installed)
find_program(AMUPMU_XMLLINT xmllint)
if(AMUPMU_XMLLINT)
	set(svg ${CMAKE_CURRENT_BINARY_DIR}/spe-report.svg)
	# the emulator is a list (qemu-aarch64-static;-L;...): one shell word each
	string(JOIN " " emulator ${CMAKE_CROSSCOMPILING_EMULATOR})
	add_test(NAME amupmu_cli_spe_report_svg
		COMMAND sh -c "rm -f '${svg}' && ${emulator} '$<TARGET_FILE:amupmu_cli>' spe report --svg '${svg}' '${spe_report_data}' >/dev/null && '${AMUPMU_XMLLINT}' --noout '${svg}'")
	set_tests_properties(amupmu_cli_spe_report_svg PROPERTIES LABELS host)
endif()
