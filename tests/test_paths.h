#pragma once
// Where the tests find their data (CONVENTIONS.md: by absolute path, never relative to the
// working directory). The paths are compiled into test_paths.cpp alone, so every other test
// file's compile command is the same in any clone and ccache can reuse its object across clones
// and worktrees. Included into every test file by the build (-include).
namespace npusim::test::paths {
const char* test_data_dir();
const char* source_dir();
const char* shared_profiles_dir();
const char* npusim_binary();
}  // namespace npusim::test::paths

#define NPUSIM_TEST_DATA_DIR (::npusim::test::paths::test_data_dir())
#define NPUSIM_SOURCE_DIR (::npusim::test::paths::source_dir())
#define NPUSIM_SHARED_PROFILES_DIR (::npusim::test::paths::shared_profiles_dir())
#define NPUSIM_BINARY (::npusim::test::paths::npusim_binary())
