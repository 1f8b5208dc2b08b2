#include "runtime/code_cache.h"

// The state on the stack, not XXH3_createState's heap block: a key is made
// on every shader cache lookup, which must stay well under a microsecond.
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

namespace gpurc::rt {

CacheKey make_cache_key(const void* program, size_t bytes, std::string_view options) {
  XXH3_state_t state;
  XXH3_INITSTATE(&state);
  XXH3_state_t* st = &state;
  XXH3_128bits_reset(st);
  uint64_t len = bytes;
  XXH3_128bits_update(st, &len, sizeof len);  // length prefix separates program from options
  if (bytes) XXH3_128bits_update(st, program, bytes);
  if (!options.empty()) XXH3_128bits_update(st, options.data(), options.size());
  XXH128_hash_t h = XXH3_128bits_digest(st);
  return CacheKey{h.low64, h.high64};
}

std::shared_ptr<ir::Executable> CodeCache::get_or_compile(const CacheKey& key, const Compile& compile,
                                                          std::string& error) {
  std::promise<Result> promise;
  std::shared_future<Result> fut;
  bool owner = false;
  {
    std::lock_guard<std::mutex> g(m_);
    auto it = map_.find(key);
    if (it != map_.end()) {
      ++hits_;
      fut = it->second;
    } else {
      ++misses_;
      owner = true;
      fut = promise.get_future().share();
      map_.emplace(key, fut);
    }
  }
  if (owner) {
    Result r;
    try {
      r.exe = compile(r.error);
    } catch (const std::exception& e) {
      r.exe = nullptr;
      r.error = e.what();
    }
    if (!r.exe && r.error.empty()) r.error = "compilation failed";
    if (!r.exe) {
      std::lock_guard<std::mutex> g(m_);
      map_.erase(key);
    }
    promise.set_value(r);
  }
  const Result& r = fut.get();
  if (!r.exe) error = r.error;
  return r.exe;
}

size_t CodeCache::size() const {
  std::lock_guard<std::mutex> g(m_);
  return map_.size();
}
uint64_t CodeCache::hits() const {
  std::lock_guard<std::mutex> g(m_);
  return hits_;
}
uint64_t CodeCache::misses() const {
  std::lock_guard<std::mutex> g(m_);
  return misses_;
}
void CodeCache::clear() {
  std::lock_guard<std::mutex> g(m_);
  map_.clear();
}

}  // namespace gpurc::rt
