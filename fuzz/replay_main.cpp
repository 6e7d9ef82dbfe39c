// Replays a fuzz target's saved inputs in the normal build, so every corpus file and every
// crash input found once (regressions/) runs under ctest and the sanitizer builds.
//
//   ic_fuzz_replay_<target> <dir>...    runs fuzz_one over every file below each directory
//
// Fails when a directory is missing or when no input was found at all: a test that replays
// nothing would pass without checking anything. A failed check aborts, naming the file first.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <vector>

#include "fuzz_support.hpp"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const fs::path dir(argv[i]);
    if (!fs::is_directory(dir)) {
      std::cerr << "not a directory: " << dir << '\n';
      return 1;
    }
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
      if (entry.is_regular_file() && entry.path().filename() != "README.md") {
        inputs.push_back(entry.path());
      }
    }
  }
  std::ranges::sort(inputs);
  if (inputs.empty()) {
    std::cerr << "no inputs to replay\n";
    return 1;
  }
  for (const auto& path : inputs) {
    std::cerr << "replaying " << path.string() << '\n';
    std::ifstream in(path, std::ios::binary);
    const std::vector<char> bytes{std::istreambuf_iterator<char>(in),
                                  std::istreambuf_iterator<char>()};
    fuzz_one(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  std::cout << "replayed " << inputs.size() << " inputs\n";
  return 0;
}
