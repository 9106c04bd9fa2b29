#include "ifcored_process.h"

#include <unistd.h>

namespace ifcore::test {

pid_t spawn_ifcored(const std::string& binary, const std::string& socket,
                    const std::vector<std::string>& extra) {
  std::vector<std::string> args = {binary, "--socket", socket};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

}  // namespace ifcore::test
