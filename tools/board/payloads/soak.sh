# SPDX-License-Identifier: GPL-2.0
# Board payload of make soak: the fuzzer with 10,000,000 calls.
AMUPMU_FUZZ_CALLS=${AMUPMU_FUZZ_CALLS:-10000000} . /payload-fuzz.sh
