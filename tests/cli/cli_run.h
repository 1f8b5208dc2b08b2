// The CLI tests' way to run a verb in-process: `gpurc ARGS...` through
// run_cli, with its exit status and both output streams.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "recompiler/cli.h"

namespace gpurc::cli_test {

struct Result {
  int rc;
  std::string out, err;
};

inline Result run(std::vector<std::string> args) {
  args.insert(args.begin(), "gpurc");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::ostringstream out, err;
  int rc = run_cli(int(args.size()), argv.data(), out, err);
  return {rc, out.str(), err.str()};
}

}  // namespace gpurc::cli_test
