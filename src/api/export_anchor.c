/* libstrata.so is linked from strata_core; this file gives the target one source. */
