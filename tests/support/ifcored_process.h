// tests/support/ifcored_process.h — starting the real ifcored binary for a test: fork and
// exec with `--socket PATH` and any extra arguments. Waiting for the socket is the test's
// own business (some connect, some look for the file).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace ifcore::test {

// The child's pid (> 0), or -1 if fork failed. The child exits 127 if exec fails.
pid_t spawn_ifcored(const std::string& binary, const std::string& socket,
                    const std::vector<std::string>& extra = {});

}  // namespace ifcore::test
