#include <iostream>

#include "recompiler/cli.h"

int main(int argc, char** argv) { return gpurc::run_cli(argc, argv, std::cout, std::cerr); }
