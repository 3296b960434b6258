# STRATA_SANITIZE: build every target (library, tests, tools) with compiler sanitizers, as
# scripts/sanitize.sh does. A comma-separated list for -fsanitize=, e.g. "address,undefined" or
# "thread"; empty (the default) builds without. UndefinedBehaviorSanitizer is made fatal
# (-fno-sanitize-recover), so a report fails the test that caused it instead of scrolling past.
set(STRATA_SANITIZE "" CACHE STRING
  "Sanitizers for every target: a -fsanitize= list (address,undefined or thread); empty: none")

if(STRATA_SANITIZE)
  string(REPLACE "," ";" strata_sanitizers "${STRATA_SANITIZE}")
  foreach(s IN LISTS strata_sanitizers)
    if(NOT s MATCHES "^(address|undefined|thread|leak)$")
      message(FATAL_ERROR "STRATA_SANITIZE: unknown sanitizer '${s}' "
                          "(expected address, undefined, thread or leak)")
    endif()
  endforeach()
  # The runtimes cannot share a process: ThreadSanitizer maps memory that AddressSanitizer wants.
  if("thread" IN_LIST strata_sanitizers AND
     ("address" IN_LIST strata_sanitizers OR "leak" IN_LIST strata_sanitizers))
    message(FATAL_ERROR "STRATA_SANITIZE: thread cannot be combined with address or leak")
  endif()
  set(strata_sanitize_flags -fsanitize=${STRATA_SANITIZE} -fno-omit-frame-pointer)
  if("undefined" IN_LIST strata_sanitizers)
    list(APPEND strata_sanitize_flags -fno-sanitize-recover=undefined)
  endif()
  # Directory-wide, before any target is made: every object and every link gets the runtime.
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${strata_sanitize_flags}>")
  add_link_options(-fsanitize=${STRATA_SANITIZE})
  message(STATUS "strata: sanitizers ${STRATA_SANITIZE}")
  # ThreadSanitizer cannot see Open MPI's synchronisation (tests/sanitizers/tsan_mpi.c says
  # why): a PMPI library makes a thread ignore memory accesses while it is inside MPI. The
  # tests link it first (tests/CMakeLists.txt), so the dynamic linker finds its MPI_* ahead of
  # libmpi's, for strata's calls and the tests' alike.
  if("thread" IN_LIST strata_sanitizers)
    add_library(strata_tsan_mpi SHARED ${PROJECT_SOURCE_DIR}/tests/sanitizers/tsan_mpi.c)
    target_link_libraries(strata_tsan_mpi PRIVATE MPI::MPI_C)
  endif()
endif()
