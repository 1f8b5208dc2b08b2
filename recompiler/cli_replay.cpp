// `gpurc replay`: runs a replay file on one engine (or several, --compare),
// prints what it produced and whether expect held.
#include <fmt/format.h>

#include <sstream>

#include "recompiler/cli_verbs.h"
#include "recompiler/replay.h"

namespace gpurc::cli {

namespace {

using replay::json;

struct Outcome {
  replay::ReplayRun run;
  std::vector<replay::Mismatch> mismatches;
  std::string expect;  // pass, fail, none
};

Outcome run_one(const json& doc, const std::filesystem::path& dir, Engine e, unsigned threads, bool count) {
  Outcome o;
  o.run = replay::run_document(doc, dir, e, threads, count);
  bool has_expect = doc.contains("expect");
  if (o.run.fault) {
    o.expect = has_expect ? "fail" : "none";
    if (has_expect) o.mismatches.push_back({"fault", "no fault", *o.run.fault});
  } else {
    o.mismatches = replay::check_expect(doc, o.run);
    o.expect = !has_expect ? "none" : o.mismatches.empty() ? "pass" : "fail";
  }
  return o;
}

// Objects a text report shows: those expect names, else everything.
bool shown(const json& doc, const replay::Observed& o) {
  if (!doc.contains("expect") || !doc["expect"].is_object()) return true;
  const json& ex = doc["expect"];
  if (!ex.contains(o.kind)) return false;
  const json& e = ex[o.kind];
  if (e.is_array()) {
    for (const json& m : e)
      if (m.is_object() && m.value("name", std::string()) == o.name) return true;
    return false;
  }
  return e.is_object() && e.contains(o.name);
}

json run_json(const json& doc, const Outcome& o) {
  json j;
  j["engine"] = o.run.engine;
  std::vector<std::string> kinds;
  for (const auto& ob : o.run.observed)
    if (std::find(kinds.begin(), kinds.end(), ob.kind) == kinds.end()) kinds.push_back(ob.kind);
  for (const auto& k : kinds) j[k] = replay::observed_to_json(doc, o.run, k);
  j["stats"] = {{"guest_instructions", o.run.guest_instructions},
                {"compile_us", o.run.compile_us},
                {"run_us", o.run.run_us}};
  if (o.run.fault) j["fault"] = {{"kind", o.run.fault_kind}, {"message", *o.run.fault}};
  j["expect"] = o.expect;
  json m = json::array();
  for (const auto& x : o.mismatches) m.push_back(x.to_json());
  j["mismatches"] = m;
  return j;
}

void print_text(const json& doc, const Outcome& o, std::ostream& out) {
  for (const auto& k : {"memory", "vars", "outputs", "registers", "emitted"}) {
    json objs = replay::observed_to_json(doc, o.run, k);
    for (const auto& ob : o.run.observed) {
      if (ob.kind != k || !shown(doc, ob)) continue;
      const json& typed = objs[ob.name];
      std::string type = typed.begin().key();
      const json& list = typed.begin().value();
      std::string vals;
      size_t n = std::min<size_t>(list.size(), 16);
      for (size_t i = 0; i < n; ++i) vals += (i ? ", " : "") + (list[i].is_string() ? list[i].get<std::string>() : list[i].dump());
      if (list.size() > n) vals += fmt::format(", ... ({} more)", list.size() - n);
      out << fmt::format("  {} {}: {}[{}] = [{}]\n", k, ob.name, type, list.size(), vals);
    }
  }
  std::string rate;
  if (o.run.guest_instructions && o.run.run_us > 0)
    rate = fmt::format(", {:.3g} lane-instructions/s", double(o.run.guest_instructions) / o.run.run_us * 1e6);
  out << fmt::format("  {}: compile {:.0f} us, run {:.0f} us{}{}\n", o.run.engine, o.run.compile_us, o.run.run_us,
                     o.run.guest_instructions ? fmt::format(", {} lane-instructions", o.run.guest_instructions) : "",
                     rate);
  if (o.run.fault) out << "  fault: " << *o.run.fault << "\n";
  if (o.expect == "none") return;
  out << "  expect: " << o.expect << "\n";
  size_t shown_count = 0;
  for (const auto& m : o.mismatches) {
    if (++shown_count > 20) {
      out << fmt::format("    ... {} more mismatches\n", o.mismatches.size() - 20);
      break;
    }
    out << fmt::format("    {}: expected {}, got {}\n", m.what, m.expected, m.actual);
  }
}

int status_of(const Outcome& o) { return o.run.fault ? 3 : o.expect == "fail" ? 1 : 0; }

}  // namespace

int replay(const ReplayArgs& a, std::ostream& out, std::ostream& err) {
  try {
    json doc = replay::load_file(a.file);
    std::filesystem::path dir = std::filesystem::path(a.file).parent_path();
    std::string title = doc.value("name", std::filesystem::path(a.file).filename().string());
    std::vector<Engine> engines;
    if (!a.compare.empty()) {
      std::stringstream ss(a.compare);
      for (std::string tok; std::getline(ss, tok, ',');) {
        Engine e;
        if (!parse_engine(tok, e)) {
          err << "error: --compare: unknown engine '" << tok << "' (interp, jit, jit-avx512, jit-avx2, jit-a64)\n";
          return 2;
        }
        engines.push_back(e);
      }
      if (engines.size() < 2) {
        err << "error: --compare needs at least two engines, e.g. --compare interp,jit\n";
        return 2;
      }
    } else {
      Engine e;
      if (!parse_engine(a.engine, e)) {
        err << "error: --engine: unknown engine '" << a.engine << "' (interp, jit, jit-avx512, jit-avx2, jit-a64)\n";
        return 2;
      }
      engines.push_back(e);
    }
    std::vector<Outcome> outcomes;
    for (Engine e : engines) outcomes.push_back(run_one(doc, dir, e, a.threads, a.json || a.count));

    if (engines.size() == 1) {
      const Outcome& o = outcomes[0];
      if (a.json) {
        json j = run_json(doc, o);
        j["name"] = title;
        out << j.dump(2) << "\n";
      } else {
        out << fmt::format("replay {} (isa {})\n", title, doc["isa"].get<std::string>());
        print_text(doc, o, out);
      }
      return status_of(o);
    }
    // --compare: every engine against the first.
    std::vector<replay::Mismatch> diffs;
    for (size_t i = 1; i < outcomes.size(); ++i) {
      auto d = replay::compare_runs(outcomes[0].run, outcomes[i].run);
      diffs.insert(diffs.end(), d.begin(), d.end());
    }
    int status = diffs.empty() ? 0 : 1;
    for (const auto& o : outcomes) status = std::max(status, status_of(o));
    if (a.json) {
      json j;
      j["name"] = title;
      j["runs"] = json::array();
      for (const auto& o : outcomes) j["runs"].push_back(run_json(doc, o));
      j["differences"] = json::array();
      for (const auto& d : diffs) j["differences"].push_back(d.to_json());
      j["engines_agree"] = diffs.empty();
      out << j.dump(2) << "\n";
    } else {
      out << fmt::format("replay {} (isa {}), comparing {} engines\n", title, doc["isa"].get<std::string>(), outcomes.size());
      for (const auto& o : outcomes) print_text(doc, o, out);
      if (diffs.empty()) {
        out << "engines agree\n";
      } else {
        out << fmt::format("engines differ ({} differences):\n", diffs.size());
        for (const auto& d : diffs) out << fmt::format("  {}: {} vs {}\n", d.what, d.expected, d.actual);
      }
    }
    return status;
  } catch (const replay::ReplayError& e) {
    err << "error: " << a.file << ": " << e.what() << "\n";
    return 2;
  } catch (const replay::json::exception& e) {
    err << "error: " << a.file << ": " << e.what() << "\n";
    return 2;
  }
}

}  // namespace gpurc::cli
