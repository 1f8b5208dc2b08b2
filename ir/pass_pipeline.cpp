// run_pipeline: the passes in their fixed order (docs/passes.md explains it).
#include <algorithm>
#include <functional>

#include "ir/compile_stages.h"
#include "ir/pass_util.h"
#include "ir/passes.h"

namespace gpurc::ir {

std::string run_pipeline(Function& f, const PassOptions& opt,
                         std::vector<std::pair<std::string, std::string>>* dumps) {
  // Vars the passes add (demoted values, execution masks, lane PCs) are
  // compiler temporaries: SSA construction neither loads nor stores them, and
  // they are dropped afterwards so the warp-context layout is the guest's.
  // So are the vars a translator marks private to one run (Function::state_vars).
  const uint32_t guest_vars = std::min<uint32_t>(uint32_t(f.vars.size()), f.state_vars);
  std::string err;
  auto step = [&](const char* name, const std::function<void()>& pass) {
    if (!err.empty()) return;
    {
      StageTimer t(name);
      pass();
    }
    if (opt.verify_each) {
      std::string v = verify(f);
      if (!v.empty()) err = std::string("after ") + name + ": " + v;
    }
    if (dumps) dumps->push_back({name, print(f)});
  };
  if (opt.verify_each) {
    std::string v = verify(f);
    if (!v.empty()) return "input: " + v;
  }
  step("demote_cross_block_values", [&] { demote_cross_block_values(f); });
  // Before lowering, the analysis matters only to lower_divergence, which
  // reads it on branch terminators; a function without cond_br / switch
  // (most shaders) skips it, since the final analysis below sets every
  // Inst::uniform anyway (an SSA copy of the whole function is what it costs).
  // Dumps (gpurc ir) still show it.
  auto has_branch = [&] {
    for (const Block& b : f.blocks) {
      ValueId t = f.terminator(BlockId(&b - f.blocks.data()));
      if (t != kNoValue && (f.insts[t].op == Opcode::CondBr || f.insts[t].op == Opcode::Switch)) return true;
    }
    return false;
  };
  if (opt.uniformity && (dumps || opt.verify_each || has_branch()))
    step("analyze_uniformity", [&] { analyze_uniformity(f); });
  if (opt.divergence && opt.uniformity && opt.if_convert)
    step("if_convert_divergent", [&] { if_convert_divergent(f); });
  // demote_cross_block_values ran above (and if_convert_divergent demotes whatever it changes).
  if (opt.divergence) step("lower_divergence", [&] { lower_divergence_demoted(f); });
  if (opt.ssa)
    step("construct_ssa", [&] {
      construct_ssa(f, guest_vars);
      bool temps_used = false;
      for (auto& b : f.blocks)
        for (ValueId v : b.insts) {
          const Inst& in = f.insts[v];
          bool var_op = in.op == Opcode::GetVar || in.op == Opcode::SetVar || in.op == Opcode::LoadVar ||
                        in.op == Opcode::StoreVar;
          temps_used |= var_op && in.imm >= guest_vars;
        }
      if (!temps_used) {
        f.vars.resize(guest_vars);
        f.state_vars = Function::kAllStateVars;
      }
    });
  if (opt.const_fold) step("const_fold", [&] { const_fold(f); });
  // Needs the folded constants (the sign-bit masks); cse then merges what it leaves equal.
  if (opt.const_fold && opt.ssa) step("simplify_float_bits", [&] { simplify_float_bits(f); });
  // After SSA (and folded branches): values of one chain of blocks stay in registers.
  if (opt.ssa) step("merge_straight_blocks", [&] { merge_straight_blocks(f); });
  if (opt.cse) step("cse", [&] { cse(f); });
  // After cse (one value per compare): an if/else's nested selects (loop4, issue 13).
  if (opt.cse) step("fold_complementary_selects", [&] { fold_complementary_selects(f); });
  // A vote whose answer the uniformity analysis already knows (a guest loop on
  // "any lane active" with a uniform active mask) becomes its predicate, which
  // makes such a loop a uniform single-block loop.
  if (opt.uniformity && opt.ssa) step("fold_uniform_votes", [&] { fold_uniform_votes(f); });
  if (opt.dce) step("dce", [&] { dce(f); });
  if (opt.sink) step("sink_out_of_loops", [&] { sink_out_of_loops(f); });
  if (opt.loop_budget) step("insert_loop_budget", [&] { insert_loop_budget(f); });
  // The backends read Inst::uniform: recompute it for the final code.
  if (opt.uniformity) step("analyze_uniformity", [&] { analyze_uniformity(f); });
  // With the final analysis just done, its flags answer is_lowered without recomputing it.
  auto lowered = [&] {
    if (!opt.uniformity) return is_lowered(f);
    for (BlockId b = 0; b < f.blocks.size(); ++b) {
      ValueId t = f.terminator(b);
      if (t == kNoValue) continue;
      const Inst& in = f.insts[t];
      if ((in.op == Opcode::CondBr || in.op == Opcode::Switch) && (in.args.empty() || !f.insts[in.args[0]].uniform))
        return false;
    }
    return true;
  };
  if (err.empty() && opt.divergence && !lowered()) err = "lower_divergence left a divergent branch";
  return err;
}

}  // namespace gpurc::ir
