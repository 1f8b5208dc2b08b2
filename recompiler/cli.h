// The gpurc command line. run_cli is the whole program (main() only calls
// it) so tests can run every verb in-process with captured output.
#pragma once
#include <ostream>

namespace gpurc {

// Exit status: 0 success; 1 a check failed (replay expect, engines differ,
// fuzz mismatches); 2 bad arguments or bad input; 3 a guest fault.
int run_cli(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace gpurc
