// The one test file whose compile command carries this clone's paths (tests/CMakeLists.txt).
namespace npusim::test::paths {
const char* test_data_dir() { return NPUSIM_PATH_TEST_DATA; }
const char* source_dir() { return NPUSIM_PATH_SOURCE; }
const char* shared_profiles_dir() { return NPUSIM_PATH_SHARED_PROFILES; }
const char* npusim_binary() { return NPUSIM_PATH_BINARY; }
}  // namespace npusim::test::paths
