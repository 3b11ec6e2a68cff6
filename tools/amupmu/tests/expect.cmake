# SPDX-License-Identifier: GPL-2.0
#
# cmake -DPROGRAM=... -DARGS=a;b -DSTATUS=n -DPATTERN=regex [-DEMULATOR=...] -P expect.cmake
# Runs PROGRAM ARGS (under EMULATOR when cross compiling) and fails unless it
# exits with STATUS and its stdout+stderr match PATTERN.
execute_process(
	COMMAND ${EMULATOR} ${PROGRAM} ${ARGS}
	RESULT_VARIABLE status
	OUTPUT_VARIABLE out
	ERROR_VARIABLE err)
set(all "${out}${err}")
if(NOT status STREQUAL STATUS)
	message(FATAL_ERROR "'${PROGRAM} ${ARGS}' exited with ${status}, expected ${STATUS}:\n${all}")
endif()
if(NOT all MATCHES "${PATTERN}")
	message(FATAL_ERROR "'${PROGRAM} ${ARGS}' output does not match '${PATTERN}':\n${all}")
endif()
message(STATUS "ok: exit ${status}:\n${all}")
