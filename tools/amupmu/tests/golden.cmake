# SPDX-License-Identifier: GPL-2.0
#
# cmake -DPROGRAM=... -DARGS=a;b -DGOLDEN=file [-DEMULATOR=...] -P golden.cmake
# Runs PROGRAM ARGS (under EMULATOR when cross compiling) and fails unless it
# exits with 0 and its stdout is GOLDEN's text, byte for byte.
execute_process(
	COMMAND ${EMULATOR} ${PROGRAM} ${ARGS}
	RESULT_VARIABLE status
	OUTPUT_VARIABLE out
	ERROR_VARIABLE err)
if(NOT status STREQUAL 0)
	message(FATAL_ERROR "'${PROGRAM} ${ARGS}' exited with ${status}:\n${out}${err}")
endif()
file(READ ${GOLDEN} want)
if(NOT out STREQUAL want)
	message(FATAL_ERROR "'${PROGRAM} ${ARGS}' output differs from ${GOLDEN}:\n--- got\n${out}--- want\n${want}")
endif()
message(STATUS "ok: the output is ${GOLDEN}'s")
