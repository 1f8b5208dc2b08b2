// Compiled code shared between launches and threads, keyed by a hash of the
// program bytes plus every option that changes the compiled code.
#pragma once
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "ir/abi.h"

namespace gpurc::rt {

struct CacheKey {
  uint64_t lo = 0, hi = 0;
  bool operator==(const CacheKey&) const = default;
};
// XXH3-128 of the program bytes followed by the option string (with a
// separator, so ("ab","c") and ("a","bc") differ).
CacheKey make_cache_key(const void* program, size_t bytes, std::string_view options);

class CodeCache {
 public:
  using Compile = std::function<std::shared_ptr<ir::Executable>(std::string& error)>;
  // Returns the cached executable for `key`, or runs `compile` once (other
  // threads asking for the same key meanwhile wait for that result). A failed
  // compilation is not cached: null is returned with `error` set.
  std::shared_ptr<ir::Executable> get_or_compile(const CacheKey& key, const Compile& compile, std::string& error);
  size_t size() const;
  uint64_t hits() const;
  uint64_t misses() const;
  void clear();

 private:
  struct Result {
    std::shared_ptr<ir::Executable> exe;
    std::string error;
  };
  struct KeyHash {
    size_t operator()(const CacheKey& k) const { return size_t(k.lo ^ (k.hi * 0x9E3779B97F4A7C15ull)); }
  };
  mutable std::mutex m_;
  std::unordered_map<CacheKey, std::shared_future<Result>, KeyHash> map_;
  uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace gpurc::rt
