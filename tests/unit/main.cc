// The Catch2 entry point of strata_unit_tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
