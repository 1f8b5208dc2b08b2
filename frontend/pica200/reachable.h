// The program words a shader can execute, for content keys of compiled code
// (the public API's shader cache: an emulator hands over the whole 4096-word
// program memory, most of it other shaders, so hashing all of it on every
// draw would cost more than the lookup).
#pragma once
#include <cstdint>
#include <span>
#include <vector>

namespace gpurc::pica {

// Appends to `out` the addresses execution from `entry` may reach, as runs
// in ascending address order: for each maximal run [begin, end) three words
// `begin, end, n` and then the n = min(end, code.size()) - begin program
// words of the run (end beyond code.size() means execution may run past the
// end of the program). A superset of what runs: every instruction but END
// may fall through, and every flow instruction may go to each address it
// names (target, target + 1, target + num), whatever its condition, stack
// state or loop count. Translation reads no other word of the program, so
// two programs that append the same words (with the same descriptors, entry
// and options) translate to the same IR.
void append_reachable_code(std::span<const uint32_t> code, uint32_t entry, std::vector<uint32_t>& out);

}  // namespace gpurc::pica
