#include <doctest/doctest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "runtime/code_cache.h"

namespace gpurc_test_runtime_code_cache {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;

namespace {
class Dummy final : public ir::Executable {
 public:
  explicit Dummy(int id) : id(id) {}
  size_t frame_bytes() const override { return 0; }
  ir::RunStatus run(ir::WarpContext& ctx) const override { return ctx.status = ir::RunStatus::Done; }
  int id;
};
}  // namespace

TEST_CASE("code cache: keys depend on program bytes and options") {
  std::string p = "program";
  rt::CacheKey a = rt::make_cache_key(p.data(), p.size(), "engine=avx2");
  CHECK(a == rt::make_cache_key(p.data(), p.size(), "engine=avx2"));
  CHECK_FALSE(a == rt::make_cache_key(p.data(), p.size(), "engine=avx512"));
  CHECK_FALSE(a == rt::make_cache_key(p.data(), p.size() - 1, "engine=avx2"));
  CHECK_FALSE(rt::make_cache_key("ab", 2, "c") == rt::make_cache_key("a", 1, "bc"));
}

TEST_CASE("code cache: hits, misses, failures and one compilation per key under contention") {
  rt::CodeCache cache;
  std::atomic<int> compiles{0};
  const int nthreads = 4, keys = 8, rounds = 50;
  std::vector<std::thread> ts;
  std::atomic<int> wrong{0};
  for (int t = 0; t < nthreads; ++t)
    ts.emplace_back([&] {
      for (int r = 0; r < rounds; ++r)
        for (int k = 0; k < keys; ++k) {
          std::string prog = "kernel" + std::to_string(k), err;
          auto exe = cache.get_or_compile(rt::make_cache_key(prog.data(), prog.size(), ""), [&](std::string&) {
            ++compiles;
            std::this_thread::yield();
            return std::make_shared<Dummy>(k);
          }, err);
          if (!exe || static_cast<Dummy*>(exe.get())->id != k) ++wrong;
        }
    });
  for (auto& t : ts) t.join();
  CHECK(wrong == 0);
  CHECK(compiles == keys);
  CHECK(cache.size() == size_t(keys));
  CHECK(cache.misses() == uint64_t(keys));
  CHECK(cache.hits() == uint64_t(nthreads * rounds * keys - keys));

  std::string err;
  rt::CacheKey bad = rt::make_cache_key("bad", 3, "");
  auto exe = cache.get_or_compile(bad, [](std::string& e) -> std::shared_ptr<ir::Executable> {
    e = "no such op";
    return nullptr;
  }, err);
  CHECK(exe == nullptr);
  CHECK(err == "no such op");
  CHECK(cache.size() == size_t(keys));  // failures are not cached
  exe = cache.get_or_compile(bad, [](std::string&) { return std::make_shared<Dummy>(99); }, err);
  REQUIRE(exe);
  CHECK(static_cast<Dummy*>(exe.get())->id == 99);
}

}  // namespace gpurc_test_runtime_code_cache
