// tests/bench/printed.h — what a section's print function writes, as a string.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace ifcore::bench {

// print(figures, FILE*) into memory.
template <class Figures, class Print>
std::string printed(const Figures& f, Print print) {
  char* text = nullptr;
  std::size_t len = 0;
  std::FILE* out = open_memstream(&text, &len);
  print(f, out);
  std::fclose(out);
  std::string s(text, len);
  std::free(text);
  return s;
}

}  // namespace ifcore::bench
