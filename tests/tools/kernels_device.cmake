# Runs strata-kernels --device on a small sweep and checks the table's shape: a float32 sum
# table (and one per type, with --all), one row per size (4, 8 and 16 KiB) with its numeric
# columns, and the --json file's rows. Run with cmake -DKERNELS=... -DJSON=<file> -P.
#
# Without a visible GPU strata-kernels exits 77. ctest reads that as skipped: this script exits
# 77 itself where CMake can (3.29+, SKIP_RETURN_CODE); elsewhere it passes strata-kernels'
# message through and the entry's SKIP_REGULAR_EXPRESSION matches it.
execute_process(COMMAND ${KERNELS} --device -b 4K -e 16K --all --json ${JSON}
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(rc EQUAL 77)
  message("${err}")
  if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.29)
    cmake_language(EXIT 77)
  endif()
  return()
endif()
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "strata-kernels --device exited ${rc}: ${err}\n${out}")
endif()
if(NOT out MATCHES "# strata-kernels --device: gpu::reduceMany on GPU 0")
  message(FATAL_ERROR "no --device header:\n${out}")
endif()
foreach(type int8 uint8 int32 uint32 int64 uint64 float16 float32 float64 bfloat16)
  if(NOT out MATCHES "\n# ${type} sum\n +size +copy \\| +k=2 +%cpy\n")
    message(FATAL_ERROR "no table for ${type}:\n${out}")
  endif()
endforeach()
foreach(size "4 KiB" "8 KiB" "16 KiB")
  string(REGEX MATCHALL "\n +${size} +[0-9.]+ \\| *[0-9.]+ +[0-9]+%" rows "${out}")
  list(LENGTH rows n)
  if(NOT n EQUAL 10)
    message(FATAL_ERROR "expected a ${size} row per type (10), found ${n}:\n${out}")
  endif()
endforeach()
file(READ ${JSON} doc)
string(JSON n LENGTH "${doc}" results)
string(JSON mode GET "${doc}" mode)
if(NOT n EQUAL 30 OR NOT mode STREQUAL "device")
  message(FATAL_ERROR "expected 30 device results in ${JSON}, found ${n} (mode ${mode})")
endif()
