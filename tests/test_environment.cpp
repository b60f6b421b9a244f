// Linked into every test executable: gives WSEMU_SOURCE_DIR and WSEMU_BIN_DIR their build-time
// values unless the environment already sets them, so a test binary finds the tree and the
// wsemu executable whether it runs under ctest or by hand. (CTest's ENVIRONMENT property cannot
// carry two variables through gtest_discover_tests: the list gets split.)
#include <cstdlib>

namespace {
const bool kEnvironmentSet = [] {
  setenv("WSEMU_SOURCE_DIR", WSEMU_TEST_SOURCE_DIR, /*overwrite=*/0);
  setenv("WSEMU_BIN_DIR", WSEMU_TEST_BIN_DIR, /*overwrite=*/0);
  return true;
}();
}  // namespace
