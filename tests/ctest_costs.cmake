# Read by ctest after the Catch2 tests are discovered (tests/CMakeLists.txt appends it to
# TEST_INCLUDE_FILES after the discovery files): a COST on the longest Catch2 test, so that
# `ctest -j2` starts it early, just after the notebooks, instead of in declaration order where
# it was the last test still running, alone on one core (100 s under ASan, docs/building.md).
set_tests_properties(
  "on the shared corpus, the leave-one-run-out figures stay within the recorded baseline"
  PROPERTIES COST 500)
