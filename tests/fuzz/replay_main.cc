// tests/fuzz/replay_main.cc — runs files through a fuzz target's LLVMFuzzerTestOneInput
// without libFuzzer: what ctest does with the seed corpus and the regression inputs in
// every build (gcc's too), so that a crash found once stays fixed.
//
//   fuzz_NAME_replay PATH...   (each PATH a file, or a folder whose files are replayed)
//
// Exits non-zero when a PATH cannot be read; a target that crashes aborts the run, and a
// sanitizer build reports it as libFuzzer would.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

bool replay(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return false;
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
  // A copy of exactly the input's size, so that ASan sees a read past its end.
  std::vector<std::uint8_t> exact(bytes);
  LLVMFuzzerTestOneInput(exact.empty() ? nullptr : exact.data(), exact.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  std::size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    std::filesystem::path p(argv[i]);
    std::vector<std::filesystem::path> files;
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) {
      for (const auto& e : std::filesystem::directory_iterator(p))
        if (e.is_regular_file()) files.push_back(e.path());
      std::sort(files.begin(), files.end());
    } else if (std::filesystem::exists(p, ec)) {
      files.push_back(p);
    } else {
      continue;  // a folder not made yet (no regression of this target so far)
    }
    for (const auto& f : files) {
      if (!replay(f)) {
        std::fprintf(stderr, "cannot read %s\n", f.c_str());
        return 1;
      }
      ++count;
    }
  }
  std::printf("replayed %zu inputs\n", count);
  return 0;
}
